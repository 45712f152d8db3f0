/* vipl.h: the VI Provider Library (VIPL 1.0) on softrnic.
 *
 * Source-compatible with the three vipl.h headers VIA applications were written against
 * (docs/vipl.md "One header for three stacks"): Intel's VIPL 1.0 (VI Architecture Developer's
 * Guide: the descriptor aggregate CS / DS[], bitmask reliability levels, the extended
 * VIP_RETURN, the 5-argument VipQueryVi, peer-to-peer connect and the name service), M-VIA's
 * (the same spellings) and Giganet cLAN's (descriptor fields Control / Data[], VIP_NOT_REACHABLE,
 * VIP_ERROR_NOT_SUPPORTED, VIP_EVENT_HANDLE, VIP_VI_CALLBACK / VIP_CQ_CALLBACK, descriptor flow
 * control, tag demultiplexing, per-VI user data), with the semantics of the VIA 1.0
 * specification chapters 2-8. Every provider-specific choice is in docs/vipl.md. C11 (the
 * descriptor's two spellings are anonymous unions).
 *
 * LP64 note: VIP_ULONG is unsigned long (64 bits here), as in the Linux VIPL headers.
 * VIP_INFINITE is (VIP_ULONG)0xFFFFFFFF, the Windows INFINITE value legacy code compares
 * with; any timeout >= VIP_INFINITE means "wait forever". */
#ifndef VIPL_H
#define VIPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif

#define VIP_INFINITE ((VIP_ULONG)0xFFFFFFFFul)

/* ---- scalar and handle types ---------------------------------------------------------- */
typedef void *VIP_PVOID;
typedef int VIP_BOOLEAN;
typedef char VIP_CHAR;
typedef unsigned char VIP_UCHAR;
typedef unsigned short VIP_USHORT;
typedef unsigned long VIP_ULONG;
typedef uint64_t VIP_UINT64;
typedef uint32_t VIP_UINT32;
typedef uint16_t VIP_UINT16;
typedef uint8_t VIP_UINT8;
typedef short VIP_SHORT;       /* cLAN */
typedef long VIP_LONG;         /* cLAN */
typedef wchar_t VIP_WCHAR;     /* cLAN */

typedef VIP_PVOID VIP_QOS;     /* contents undefined by VIPL; softrnic accepts NULL only */

#define VIP_TRUE (1)
#define VIP_FALSE (0)

typedef VIP_PVOID VIP_NIC_HANDLE;
typedef VIP_PVOID VIP_VI_HANDLE;
typedef VIP_PVOID VIP_PROTECTION_HANDLE;
typedef VIP_PVOID VIP_CONN_HANDLE;
typedef VIP_PVOID VIP_CQ_HANDLE;
typedef VIP_UINT32 VIP_MEM_HANDLE;   /* the iWARP STag of the registration; 0 is never valid */
typedef VIP_PVOID VIP_EVENT_HANDLE;  /* cLAN: an event of VipAddTagCQ (docs/vipl.md) */

/* A VI network address: HostAddressLen octets of host address, then DiscriminatorLen octets of
 * discriminator, allocated by the caller (variable length). softrnic's host address is 6
 * octets: IPv4 address then TCP port, both in network order (docs/vipl.md). */
typedef struct {
	VIP_UINT16 HostAddressLen;
	VIP_UINT16 DiscriminatorLen;
	VIP_UINT8 HostAddress[1];
	char padding[8 - sizeof(VIP_UINT16) * 2 - sizeof(VIP_UINT8)];
} VIP_NET_ADDRESS;

/* Reliability levels: bit values (VIPL 1.0), also used as support masks. */
typedef VIP_USHORT VIP_RELIABILITY_LEVEL;
#define VIP_SERVICE_UNRELIABLE 0x01
#define VIP_SERVICE_RELIABLE_DELIVERY 0x02
#define VIP_SERVICE_RELIABLE_RECEPTION 0x04
/* cLAN: OR'ed into a VI's level, descriptor flow control: sends wait in the library until the
 * peer has a receive posted for them (VipPostDeferredSends; docs/vipl.md). */
#define VIP_SERVICE_DFC 0x8000

typedef struct {
	VIP_CHAR Name[64];
	VIP_ULONG HardwareVersion;
	VIP_ULONG ProviderVersion;
	VIP_UINT16 NicAddressLen;
	const VIP_UINT8 *LocalNicAddress;
	VIP_BOOLEAN ThreadSafe;
	VIP_UINT16 MaxDiscriminatorLen;
	VIP_ULONG MaxRegisterBytes;
	VIP_ULONG MaxRegisterRegions;
	VIP_ULONG MaxRegisterBlockBytes;
	VIP_ULONG MaxVI;
	VIP_ULONG MaxDescriptorsPerQueue;
	VIP_ULONG MaxSegmentsPerDesc;
	VIP_ULONG MaxCQ;
	VIP_ULONG MaxCQEntries;
	VIP_ULONG MaxTransferSize;
	VIP_ULONG NativeMTU;
	VIP_ULONG MaxPtags;
	VIP_RELIABILITY_LEVEL ReliabilityLevelSupport;
	VIP_RELIABILITY_LEVEL RDMAReadSupport;
} VIP_NIC_ATTRIBUTES;

/* ---- descriptors (VIA §10; little-endian, 64-octet aligned) --------------------------- */
#define VIP_DESCRIPTOR_ALIGNMENT 64

struct _VIP_DESCRIPTOR;

typedef union {
	VIP_UINT64 AddressBits;
	VIP_PVOID Address;
	struct _VIP_DESCRIPTOR *Descriptor;   /* cLAN */
} VIP_PVOID64;

typedef struct {
	VIP_PVOID64 Next;            /* written by the library at post time */
	VIP_MEM_HANDLE NextHandle;   /* written by the library at post time */
	VIP_UINT16 SegCount;         /* segments after this one, the address segment included */
	VIP_UINT16 Control;
	VIP_UINT32 Reserved;         /* must be 0 */
	VIP_UINT32 ImmediateData;
	VIP_UINT32 Length;
	VIP_UINT32 Status;           /* 0 before posting; written last by the provider */
} VIP_CONTROL_SEGMENT;

typedef struct {
	VIP_PVOID64 Data;            /* remote VA (RDMA Write destination / Read source) */
	VIP_MEM_HANDLE Handle;       /* remote memory handle */
	VIP_UINT32 Reserved;         /* must be 0 */
} VIP_ADDRESS_SEGMENT;

typedef struct {
	VIP_PVOID64 Data;
	VIP_MEM_HANDLE Handle;
	VIP_UINT32 Length;
} VIP_DATA_SEGMENT;

typedef union {
	VIP_ADDRESS_SEGMENT Remote;
	VIP_DATA_SEGMENT Local;
} VIP_DESCRIPTOR_SEGMENT;

/* The aggregate applications use; they allocate room for more segments after DS[1]. Intel's
 * and M-VIA's headers name its parts CS and DS[] (a segment: .Local or .Remote), cLAN's
 * Control and Data[] (a data segment; an RDMA descriptor's address segment is Data[0], the
 * same 16 octets); here both names reach the same octets. */
typedef struct _VIP_DESCRIPTOR {
	union {
		VIP_CONTROL_SEGMENT CS;
		VIP_CONTROL_SEGMENT Control;
	};
	union {
		VIP_DESCRIPTOR_SEGMENT DS[2];
		VIP_DATA_SEGMENT Data[2];
	};
} VIP_DESCRIPTOR;

/* Control field */
#define VIP_CONTROL_OP_SENDRECV 0x0000
#define VIP_CONTROL_OP_RDMAWRITE 0x0001
#define VIP_CONTROL_OP_RDMAREAD 0x0002
#define VIP_CONTROL_OP_RDMA_READ VIP_CONTROL_OP_RDMAREAD   /* the spec's spelling */
#define VIP_CONTROL_OP_RESERVED 0x0003
#define VIP_CONTROL_OP_MASK 0x0003
#define VIP_CONTROL_IMMEDIATE 0x0004
#define VIP_CONTROL_QFENCE 0x0008
#define VIP_CONTROL_RESERVED 0xFFF0

/* Status field */
#define VIP_STATUS_DONE 0x00000001
#define VIP_STATUS_FORMAT_ERROR 0x00000002
#define VIP_STATUS_PROTECTION_ERROR 0x00000004
#define VIP_STATUS_LENGTH_ERROR 0x00000008
#define VIP_STATUS_PARTIAL_ERROR 0x00000010
#define VIP_STATUS_DESC_FLUSHED_ERROR 0x00000020
#define VIP_STATUS_TRANSPORT_ERROR 0x00000040
#define VIP_STATUS_RDMA_PROT_ERROR 0x00000080
#define VIP_STATUS_REMOTE_DESC_ERROR 0x00000100
#define VIP_STATUS_ERROR_MASK 0x000001FE

#define VIP_STATUS_OP_SEND 0x00000000
#define VIP_STATUS_OP_RECEIVE 0x00010000
#define VIP_STATUS_OP_RDMA_WRITE 0x00020000
#define VIP_STATUS_OP_REMOTE_RDMA_WRITE 0x00030000
#define VIP_STATUS_OP_RDMA_READ 0x00040000
#define VIP_STATUS_OP_MASK 0x00070000

#define VIP_STATUS_IMMEDIATE 0x00080000
#define VIP_STATUS_RESERVED 0xFFF0FE00

/* ---- VI, memory, errors ---------------------------------------------------------------- */
typedef enum {
	VIP_STATE_IDLE,
	VIP_STATE_CONNECTED,
	VIP_STATE_CONNECT_PENDING,
	VIP_STATE_ERROR
} VIP_VI_STATE;

typedef struct {
	VIP_RELIABILITY_LEVEL ReliabilityLevel;
	VIP_ULONG MaxTransferSize;
	VIP_QOS QoS;
	VIP_PROTECTION_HANDLE Ptag;
	VIP_BOOLEAN EnableRdmaWrite;
	VIP_BOOLEAN EnableRdmaRead;
} VIP_VI_ATTRIBUTES;

typedef struct _VIP_MEM_ATTRIBUTES {
	VIP_PROTECTION_HANDLE Ptag;
	VIP_BOOLEAN EnableRdmaWrite;
	VIP_BOOLEAN EnableRdmaRead;
} VIP_MEM_ATTRIBUTES;

typedef enum _VIP_ERROR_CODE {
	VIP_ERROR_POST_DESC,
	VIP_ERROR_CONN_LOST,
	VIP_ERROR_RECVQ_EMPTY,
	VIP_ERROR_VI_OVERRUN,
	VIP_ERROR_RDMAW_PROT,
	VIP_ERROR_RDMAW_DATA,
	VIP_ERROR_RDMAW_ABORT,
	VIP_ERROR_RDMAR_PROT,
	VIP_ERROR_COMP_PROT,
	VIP_ERROR_RDMA_TRANSPORT,
	VIP_ERROR_CATASTROPHIC
} VIP_ERROR_CODE;

typedef enum _VIP_RESOURCE_CODE {
	VIP_RESOURCE_NIC,
	VIP_RESOURCE_VI,
	VIP_RESOURCE_CQ,
	VIP_RESOURCE_DESCRIPTOR
} VIP_RESOURCE_CODE;

typedef struct _VIP_ERROR_DESCRIPTOR {
	VIP_NIC_HANDLE NicHandle;
	VIP_VI_HANDLE ViHandle;
	VIP_CQ_HANDLE CQHandle;
	VIP_DESCRIPTOR *DescriptorPtr;
	VIP_ULONG OpCode;              /* status bits 18:16 encoding */
	VIP_RESOURCE_CODE ResourceCode;
	VIP_ERROR_CODE ErrorCode;
} VIP_ERROR_DESCRIPTOR;

/* Return codes; ordinals as in the VIPL 1.0 headers (applications index tables by them). */
typedef enum {
	VIP_SUCCESS,
	VIP_NOT_DONE,
	VIP_INVALID_PARAMETER,
	VIP_ERROR_RESOURCE,
	VIP_TIMEOUT,
	VIP_REJECT,
	VIP_INVALID_RELIABILITY_LEVEL,
	VIP_INVALID_MTU,
	VIP_INVALID_QOS,
	VIP_INVALID_PTAG,
	VIP_INVALID_RDMAREAD,
	VIP_DESCRIPTOR_ERROR,
	VIP_INVALID_STATE,
	VIP_ERROR_NAMESERVICE,
	VIP_NO_MATCH,
	VIP_NOT_REACHABLE,        /* cLAN: no route to the remote host, or it did not answer */
	VIP_ERROR_NOT_SUPPORTED,  /* cLAN: a request this provider does not offer */
	VIP_ERROR                 /* cLAN: an error no other code names */
} VIP_RETURN;
#define VIP_REJECTED VIP_REJECT   /* the spelling of VIA §9.4.4 */

/* VipQuerySystemManagementInfo */
#define VIP_SMI_AUTODISCOVERY ((VIP_ULONG)1)
typedef struct {
	VIP_ULONG NumberOfHops;
	VIP_NET_ADDRESS **ADAddrArray;
	VIP_ULONG NumAdAddrs;
} VIP_AUTODISCOVERY_LIST;

/* ---- functions ------------------------------------------------------------------------- */
/* NIC */
VIP_RETURN VipOpenNic(IN const VIP_CHAR *DeviceName, OUT VIP_NIC_HANDLE *NicHandle);
VIP_RETURN VipCloseNic(IN VIP_NIC_HANDLE NicHandle);

/* VIs */
VIP_RETURN VipCreateVi(IN VIP_NIC_HANDLE NicHandle, IN VIP_VI_ATTRIBUTES *ViAttribs,
		       IN VIP_CQ_HANDLE SendCQHandle, IN VIP_CQ_HANDLE RecvCQHandle,
		       OUT VIP_VI_HANDLE *ViHandle);
VIP_RETURN VipDestroyVi(IN VIP_VI_HANDLE ViHandle);

/* Client / server connections */
VIP_RETURN VipConnectWait(IN VIP_NIC_HANDLE NicHandle, IN VIP_NET_ADDRESS *LocalAddr,
			  IN VIP_ULONG Timeout, OUT VIP_NET_ADDRESS *RemoteAddr,
			  OUT VIP_VI_ATTRIBUTES *RemoteViAttribs, OUT VIP_CONN_HANDLE *ConnHandle);
VIP_RETURN VipConnectAccept(IN VIP_CONN_HANDLE ConnHandle, IN VIP_VI_HANDLE ViHandle);
VIP_RETURN VipConnectReject(IN VIP_CONN_HANDLE ConnHandle);
VIP_RETURN VipConnectRequest(IN VIP_VI_HANDLE ViHandle, IN VIP_NET_ADDRESS *LocalAddr,
			     IN VIP_NET_ADDRESS *RemoteAddr, IN VIP_ULONG Timeout,
			     OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);
VIP_RETURN VipDisconnect(IN VIP_VI_HANDLE ViHandle);

/* Peer-to-peer connections (VIPL 1.0) */
VIP_RETURN VipConnectPeerRequest(IN VIP_VI_HANDLE ViHandle, IN VIP_NET_ADDRESS *LocalAddr,
				 IN VIP_NET_ADDRESS *RemoteAddr, IN VIP_ULONG Timeout);
VIP_RETURN VipConnectPeerDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);
VIP_RETURN VipConnectPeerWait(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);

/* Protection tags and memory */
VIP_RETURN VipCreatePtag(IN VIP_NIC_HANDLE NicHandle, OUT VIP_PROTECTION_HANDLE *ProtectionTag);
VIP_RETURN VipDestroyPtag(IN VIP_NIC_HANDLE NicHandle, IN VIP_PROTECTION_HANDLE ProtectionTag);
VIP_RETURN VipRegisterMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
			  IN VIP_ULONG Length, IN VIP_MEM_ATTRIBUTES *MemAttribs,
			  OUT VIP_MEM_HANDLE *MemoryHandle);
VIP_RETURN VipDeregisterMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
			    IN VIP_MEM_HANDLE MemoryHandle);

/* Data transfer and completion */
typedef void (*VIP_VI_NOTIFY_HANDLER)(VIP_PVOID Context, VIP_NIC_HANDLE NicHandle,
				      VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR *DescriptorPtr);
typedef void (*VIP_CQ_NOTIFY_HANDLER)(VIP_PVOID Context, VIP_NIC_HANDLE NicHandle,
				      VIP_VI_HANDLE ViHandle, VIP_BOOLEAN RecvQueue);
typedef VIP_VI_NOTIFY_HANDLER VIP_VI_CALLBACK;   /* cLAN's names of the same types */
typedef VIP_CQ_NOTIFY_HANDLER VIP_CQ_CALLBACK;

VIP_RETURN VipPostSend(IN VIP_VI_HANDLE ViHandle, IN VIP_DESCRIPTOR *DescriptorPtr,
		       IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipSendDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipSendWait(IN VIP_VI_HANDLE ViHandle, IN VIP_ULONG TimeOut,
		       OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipPostRecv(IN VIP_VI_HANDLE ViHandle, IN VIP_DESCRIPTOR *DescriptorPtr,
		       IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipRecvDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipRecvWait(IN VIP_VI_HANDLE ViHandle, IN VIP_ULONG TimeOut,
		       OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipCQDone(IN VIP_CQ_HANDLE CQHandle, OUT VIP_VI_HANDLE *ViHandle,
		     OUT VIP_BOOLEAN *RecvQueue);
VIP_RETURN VipCQWait(IN VIP_CQ_HANDLE CQHandle, IN VIP_ULONG Timeout, OUT VIP_VI_HANDLE *ViHandle,
		     OUT VIP_BOOLEAN *RecvQueue);
VIP_RETURN VipSendNotify(IN VIP_VI_HANDLE ViHandle, IN VIP_PVOID Context,
			 IN VIP_VI_NOTIFY_HANDLER Handler);
VIP_RETURN VipRecvNotify(IN VIP_VI_HANDLE ViHandle, IN VIP_PVOID Context,
			 IN VIP_VI_NOTIFY_HANDLER Handler);
VIP_RETURN VipCQNotify(IN VIP_CQ_HANDLE CqHandle, IN VIP_PVOID Context,
		       IN VIP_CQ_NOTIFY_HANDLER Handler);

/* Completion queues */
VIP_RETURN VipCreateCQ(IN VIP_NIC_HANDLE NicHandle, IN VIP_ULONG EntryCount,
		       OUT VIP_CQ_HANDLE *CQHandle);
VIP_RETURN VipDestroyCQ(IN VIP_CQ_HANDLE CQHandle);
VIP_RETURN VipResizeCQ(IN VIP_CQ_HANDLE CQHandle, IN VIP_ULONG EntryCount);

/* Queries and attributes */
VIP_RETURN VipQueryNic(IN VIP_NIC_HANDLE NicHandle, OUT VIP_NIC_ATTRIBUTES *Attributes);
VIP_RETURN VipSetViAttributes(IN VIP_VI_HANDLE ViHandle, IN VIP_VI_ATTRIBUTES *Attributes);
VIP_RETURN VipQueryVi(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_STATE *State,
		      OUT VIP_VI_ATTRIBUTES *Attributes, OUT VIP_BOOLEAN *SendQueueEmpty,
		      OUT VIP_BOOLEAN *RecvQueueEmpty);
VIP_RETURN VipSetMemAttributes(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Address,
			       IN VIP_MEM_HANDLE MemHandle, IN VIP_MEM_ATTRIBUTES *MemAttribs);
VIP_RETURN VipQueryMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Address,
		       IN VIP_MEM_HANDLE MemHandle, OUT VIP_MEM_ATTRIBUTES *MemAttribs);
VIP_RETURN VipQuerySystemManagementInfo(IN VIP_NIC_HANDLE NicHandle, IN VIP_ULONG InfoType,
					OUT VIP_PVOID SysManInfo);

/* Asynchronous errors */
typedef void (*VIP_ERROR_HANDLER)(VIP_PVOID Context, VIP_ERROR_DESCRIPTOR *ErrorDesc);
VIP_RETURN VipErrorCallback(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Context,
			    IN VIP_ERROR_HANDLER Handler);

/* Name service (VIPL 1.0) */
VIP_RETURN VipNSInit(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID NSInitInfo);
VIP_RETURN VipNSGetHostByName(IN VIP_NIC_HANDLE NicHandle, IN VIP_CHAR *Name,
			      OUT VIP_NET_ADDRESS *Address, IN VIP_ULONG NameIndex);
VIP_RETURN VipNSGetHostByAddr(IN VIP_NIC_HANDLE NicHandle, IN VIP_NET_ADDRESS *Address,
			      OUT VIP_CHAR *Name, IN OUT VIP_ULONG *NameLen);
VIP_RETURN VipNSShutdown(IN VIP_NIC_HANDLE NicHandle);

/* Giganet cLAN's extensions (docs/vipl.md "One header for three stacks") */
/* Descriptor flow control: issue the sends of a VIP_SERVICE_DFC VI that wait for the peer's
 * receives as far as they are posted now; *SendsDeferred: whether some still wait;
 * EnableInterrupt: the library issues the rest by itself as receives are posted (else only at
 * this call, a post or a Done / Wait on the VI). */
VIP_RETURN VipPostDeferredSends(IN VIP_VI_HANDLE ViHandle, IN VIP_BOOLEAN EnableInterrupt,
				IN OUT VIP_BOOLEAN *SendsDeferred);
/* Tag demultiplexing: *Event (created when NULL) is signalled for each entry CQHandle takes of a
 * VI whose user data (VipSetUserData) is Tag; of several events of one tag, the one of the
 * highest Priority. The event is a file descriptor (VipEventFd) that poll() sees readable
 * while signals are pending; VipEventWait takes one. */
VIP_RETURN VipAddTagCQ(IN VIP_CQ_HANDLE CQHandle, IN OUT VIP_EVENT_HANDLE *Event, IN VIP_ULONG Tag,
		       IN VIP_ULONG Priority);
VIP_RETURN VipRemoveTagCQ(IN VIP_CQ_HANDLE CQHandle, IN VIP_EVENT_HANDLE Event, IN VIP_ULONG Tag);
VIP_RETURN VipEventWait(IN VIP_EVENT_HANDLE Event, IN VIP_ULONG Timeout);
int VipEventFd(IN VIP_EVENT_HANDLE Event);
VIP_RETURN VipEventClose(IN VIP_EVENT_HANDLE Event);
/* One pointer per VI for the application (NULL at creation). */
void VipSetUserData(IN VIP_VI_HANDLE ViHandle, IN VIP_PVOID Data);
VIP_PVOID VipGetUserData(IN VIP_VI_HANDLE ViHandle);

#ifdef __cplusplus
}
#endif

#endif

/* VI/TCP (draft-dicecco-vitcp-01), VIPL's second wire (docs/vipl.md "VI/TCP"): one kernel TCP
 * connection per VI connection, carrying VI segments (segment header, RDMA header, CE header,
 * payload) in network byte order. Internal to vipl/; every function runs with the NIC lock
 * held unless it says otherwise. */
#ifndef VITCP_H
#define VITCP_H

#include "vipl_int.h"

#include <poll.h>

#include "rn_transport.h"

/* The process's transport, kernel sockets or the DPDK port (libibverbs' private export,
 * verbs/sv_transport.c): VI/TCP streams go where the RNIC's would. */
int softrnic_transport_default(const struct rn_transport **out);

/* ---- message formats (vitcp_msg.c), draft §3 ------------------------------------------ */
#define VT_VERSION 1
#define VT_HDR_LEN 24            /* segment header */
#define VT_RDMA_LEN 16           /* RDMA header */
#define VT_CE_LEN 140            /* CE header without options */
#define VT_CE_OPTS_MAX 32        /* the options we send, at most */
#define VT_SEG_MAX 65535         /* Segment Length is 16 bits */
#define VT_PAYLOAD_MAX 32768     /* payload octets we put in one segment (D262) */
#define VT_READ_WINDOW 16        /* RDMA Reads we let the peer have outstanding (D266) */
#define VT_OUT_MAX (1u << 20)    /* queued octets above which posting waits for TCP */

enum vt_type { VT_SEND = 0, VT_RDMA_WRITE = 1, VT_READ_REQ = 2, VT_READ_RESP = 3, VT_NOP = 4,
	       VT_CONN_REQ = 5, VT_CONN_ACCEPT = 6, VT_CONN_REJECT = 7, VT_CONN_NOMATCH = 8 };
#define VT_F_EOM 0x80
#define VT_F_IDV 0x40
#define VT_F_TRE 0x20
#define VT_TYPE_MASK 0x1F

/* Remote Error Code, VI Error Type bits (low byte) */
#define VT_E_MPE 0x01            /* RDMA memory protection error */
#define VT_E_VDE 0x02            /* VI descriptor error */
#define VT_E_UTE 0x04            /* unrecoverable transport error */

/* CE header Calling Attributes */
#define VT_A_UR 0x0001
#define VT_A_RD 0x0002
#define VT_A_RR 0x0004
#define VT_A_RDMAW 0x0008
#define VT_A_RDMAR 0x0010
#define VT_A_DFC 0x0020
#define VT_A_P2P 0x0040

#define VT_OPT_END 0
#define VT_OPT_CRC 1
#define VT_OPT_URGENT 2
/* softrnic's own options (D269): others ignore them (§3.3), VIPL keeps its semantics */
#define VT_OPT_NIC_ADDR 0x8001   /* the sender's VIPL NIC address: IPv4 + port (6 octets) */
#define VT_OPT_TIMEOUT 0x8002    /* ConnectRequest: how long the requester still waits, ms */
#define VT_OPT_REDIRECT 0x8003   /* ConnectReject: connect to this NIC instead (6 octets) */

struct vt_hdr {
	uint8_t version, flags;      /* flags: Eom IdV TrE + type */
	uint16_t seg_len;            /* header to payload end, trailer included (D261) */
	uint32_t offset, imm, msgno, ack;
	uint16_t rx_posted, rerr;
};

struct vt_rdma {
	uint64_t addr;
	uint32_t handle, length;
};

struct vt_ce {
	uint16_t attrs;
	uint32_t mtu;
	uint16_t read_window;
	uint8_t calling_len, called_len;
	uint8_t calling[VIPL_MAX_DISC], called[VIPL_MAX_DISC];
	bool crc, urgent;            /* options present */
	bool has_addr, has_timeout, has_redirect; /* softrnic's options present */
	uint8_t addr[VIPL_ADDR_LEN];
	uint8_t redirect[VIPL_ADDR_LEN];
	uint32_t timeout_ms;
};

void vt_hdr_put(uint8_t *p, const struct vt_hdr *h);
void vt_hdr_get(const uint8_t *p, struct vt_hdr *h);
void vt_rdma_put(uint8_t *p, const struct vt_rdma *r);
void vt_rdma_get(const uint8_t *p, struct vt_rdma *r);
/* CE header and options (End of Option List when crc) into p; its length. */
size_t vt_ce_put(uint8_t *p, const struct vt_ce *c);
/* CE header of a segment body of len octets; -1 when malformed (length over 64, short). */
int vt_ce_get(const uint8_t *p, size_t len, struct vt_ce *c);
/* The draft's CRC (§3.6) over n octets, the CRC field excluded. */
uint32_t vt_crc(const uint8_t *p, size_t n);
/* §3.5: the trailer's CRC over the len - 4 octets before it, into its last four. */
void vt_crc_seal(uint8_t *seg, size_t len);
/* The segment of len octets ends in a trailer holding its CRC. */
bool vt_crc_sealed(const uint8_t *seg, size_t len);
/* SOFTRNIC_VITCP_CRC (key vitcp_crc) is 1: offer the CRC option, and take it when offered. */
bool vt_crc_wanted(void);
static inline unsigned vt_type(const struct vt_hdr *h)
{
	return h->flags & VT_TYPE_MASK;
}

/* ---- connections (vitcp_conn.c) ----------------------------------------------------------- */
enum vt_state {
	VT_CONNECTING,      /* active: TCP connect in progress */
	VT_PENDING_ACCEPT,  /* active: ConnectRequest sent */
	VT_INCOMING,        /* passive: TCP accepted, waiting for the ConnectRequest */
	VT_MATCHING,        /* passive: a request held for a ConnectWait (a vipl_req) */
	VT_CONNECTED,
	VT_CLOSING,         /* a last message (Reject, NoMatch, error ACK) leaves, then close */
};

/* One message being received (a Send, RDMA Write or Read Response spans segments). */
struct vt_rx_msg {
	bool active;
	unsigned type;
	uint32_t msgno, next_off, imm;
	bool idv, tre, drop;         /* drop: the rest of an Unreliable message that failed */
	struct vipl_wqe *e;          /* the receive (Send) or Read it fills */
	struct vt_rdma rdma;
};

struct vt_conn {
	struct vipl_nic *nic;
	struct vt_conn *next;        /* the NIC's list (nic->vt_conns, or nic->vt_dead once closed) */
	struct rn_conn *rc;          /* the stream (rn_transport.h); NULL once closed */
	int fd;                      /* rn_conn_fd(rc) for the poll set; -1 once closed */
	enum vt_state state;
	struct vipl_vi *vi;          /* connected / connecting VI */
	struct vipl_req *req;        /* VT_MATCHING: the request it belongs to */
	uint64_t deadline_ms;        /* INCOMING, CLOSING: give up then */
	uint8_t *out;                /* octets not yet taken by TCP */
	size_t out_len, out_off, out_cap;
	uint64_t tx_total;           /* octets given to TCP so far */
	uint64_t tx_queued;          /* octets ever queued (out_len counts into it) */
	uint8_t in[VT_SEG_MAX + 8];
	size_t in_len;
	/* message numbers (draft §3.2) */
	uint32_t tx_msgno;           /* the last message number sent */
	uint32_t rx_ok;              /* the last message received without error (Message ACK) */
	uint32_t ack_told;           /* Message ACK in the last segment sent */
	uint16_t err_code;           /* Remote Error Code to report (sticky after an error) */
	uint16_t rx_posted;          /* receives posted in this connection's lifetime, mod 2^16 */
	uint16_t posted_told;
	uint16_t peer_posted;        /* the peer's Rx Descriptors Posted */
	uint16_t consumed;           /* DFC: our messages that took a receive of the peer */
	bool peer_dfc, peer_rdmaw, peer_rdmar;
	unsigned peer_window;        /* RDMA Reads the peer lets us have outstanding */
	unsigned reads_out;          /* ours outstanding */
	unsigned reads_in;           /* the peer's we answered since (never more than ours) */
	bool shut;                   /* CLOSING: our FIN went */
	bool at_rdv;                 /* came in at the host's well-known port */
	struct vt_rx_msg rx;         /* the Send / RDMA Write arriving */
	struct vt_rx_msg resp;       /* the RDMA Read Response arriving (may interleave) */
	uint32_t rx_expect;          /* the next message number the peer must use */
	/* §3.6: every segment after the CE segments carries a CRC trailer when both the
	 * ConnectRequest and the ConnectAccept had the CRC option (D265) */
	bool crc;
	bool peer_crc;               /* passive: the ConnectRequest offered it */
	bool crc_asked;              /* active: our ConnectRequest offered it */
};

struct vt_conn *vt_conn_new(struct vipl_nic *nic, struct rn_conn *rc, enum vt_state st);
/* Close the socket now; the memory goes when the NIC thread next builds its poll set. */
void vt_conn_close(struct vt_conn *c);
/* Detached from its VI or request: what is queued leaves (at most ms), then the close. */
void vt_close_after(struct vt_conn *c, uint64_t ms);
/* CLOSING: what is queued goes on leaving; once it is gone, our FIN (the peer's ends it). */
void vt_closing(struct vt_conn *c);
void vt_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next);
int vt_listen(struct vipl_nic *nic);
/* a listener is readable: rdv says it is the host's well-known port */
void vt_on_listen(struct vipl_nic *nic, struct rn_conn *l, bool rdv);
struct rn_conn *vt_listen_at(struct vipl_nic *nic, uint16_t port, uint16_t *bound);

/* ---- the host's well-known port (vitcp_rdv.c) -------------------------------------------- */
void vt_rdv_take(struct vipl_nic *nic, uint64_t now);
void vt_rdv_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next);
bool vt_at_rdv(const struct vt_conn *c);
/* A request on c for called, at the well-known port, that another process waits for: sent
 * there with a ConnectReject naming its NIC (D276), c closing; 0 when it went. */
int vt_forward(struct vt_conn *c, const uint8_t *called, size_t called_len);
int vt_connect(struct vipl_vi *vi);
void vt_on_tcp_connected(struct vt_conn *c);    /* an active TCP connect ended (or failed) */
/* A CE message of this side (ConnectRequest / Accept / Reject / NoMatch). */
int vt_send_ce(struct vt_conn *c, struct vipl_vi *vi, unsigned type);
void vt_on_ce(struct vipl_nic *nic, struct vt_conn *c, const struct vt_hdr *h,
	      const uint8_t *body, size_t len);

/* ---- transmit (vitcp_tx.c) --------------------------------------------------------------- */
/* Queue len octets (a whole segment) for TCP; -1 on allocation failure. */
int vt_queue(struct vt_conn *c, const void *p, size_t len);
/* Hand queued octets to TCP (nonblocking); -1 when the connection failed. */
int vt_flush(struct vt_conn *c);
/* A header of this side (message ACK, receives posted, error code) around type/flags. */
void vt_hdr_fill(struct vt_conn *c, struct vt_hdr *h, unsigned flags, uint32_t msgno);
int vt_nop(struct vt_conn *c);
/* The octets of c's trailer after the CE segments: 4 with the CRC, else 0. */
static inline size_t vt_trailer_len(const struct vt_conn *c)
{
	return c->crc ? 4 : 0;
}
/* After octets went to TCP: sends that are complete at that (UR, RD). */
void vt_tx_progress(struct vipl_vi *vi);
/* The peer's Message ACK / error (RR). */
void vt_on_ack(struct vipl_vi *vi, uint32_t ack, uint16_t rerr);
/* Read Response segments for a Read Request the peer sent (already validated). */
int vt_read_respond(struct vipl_vi *vi, uint32_t msgno, const struct vt_rdma *r, bool bad);
void vt_sq_pump(struct vipl_vi *vi);
void vt_rq_pump(struct vipl_vi *vi);
/* A NOP when the peer is owed a Message ACK or a count of receives (idle sender). */
void vt_tell(struct vipl_vi *vi);

/* ---- receive (vitcp_rx.c) ---------------------------------------------------------------- */
/* Whole segments of c->in; -1 when the connection ended (c freed or detached). */
int vt_rx_segments(struct vipl_nic *nic, struct vt_conn *c);
/* The connection of vi failed (code for the application, status for the RR send the peer
 * named, 0 for none). */
void vt_fail(struct vipl_vi *vi, VIP_ERROR_CODE code, uint32_t status, bool orderly);

/* ---- the NIC thread (vitcp_io.c) --------------------------------------------------------- */
int vt_fds(struct vipl_nic *nic, struct pollfd *p, int max);
void vt_dead_free(struct vipl_nic *nic);     /* the closed connections' memory */
void vt_io(struct vipl_nic *nic, const struct pollfd *p, int n);

#endif

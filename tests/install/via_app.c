/* A VIA application that links VIPL the way M-VIA's and cLAN's were linked, -lvipl, and
 * nothing else (tests/install/install.sh): it registers a buffer under a protection tag on
 * softrnic0 and exits 0 when every call succeeds. */
#include <stdio.h>

#include <vipl.h>

int main(void)
{
	static char buf[4096];
	VIP_NIC_HANDLE nic;
	VIP_PROTECTION_HANDLE ptag;
	VIP_MEM_ATTRIBUTES ma = { 0 };
	VIP_MEM_HANDLE mh;

	if (VipOpenNic((VIP_CHAR *)"softrnic0", &nic) != VIP_SUCCESS) {
		fprintf(stderr, "via_app: VipOpenNic(softrnic0) failed\n");
		return 1;
	}
	if (VipCreatePtag(nic, &ptag) != VIP_SUCCESS) {
		fprintf(stderr, "via_app: VipCreatePtag failed\n");
		return 1;
	}
	ma.Ptag = ptag;
	if (VipRegisterMem(nic, buf, sizeof(buf), &ma, &mh) != VIP_SUCCESS ||
	    VipDeregisterMem(nic, buf, mh) != VIP_SUCCESS) {
		fprintf(stderr, "via_app: VipRegisterMem / VipDeregisterMem failed\n");
		return 1;
	}
	if (VipDestroyPtag(nic, ptag) != VIP_SUCCESS || VipCloseNic(nic) != VIP_SUCCESS) {
		fprintf(stderr, "via_app: VipDestroyPtag / VipCloseNic failed\n");
		return 1;
	}
	printf("via_app: a buffer registered on softrnic0 through -lvipl\n");
	return 0;
}

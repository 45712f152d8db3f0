/* A VIA tool of the Windows era's kind: it loads the VI Provider Library at run time,
 * dlopen("libvipl.so"), and looks its calls up by name (tests/install/install.sh). Exits 0
 * when VipOpenNic / VipQueryNic / VipCloseNic found that way open and name softrnic0. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <vipl.h>

typedef VIP_RETURN (*open_fn)(const VIP_CHAR *, VIP_NIC_HANDLE *);
typedef VIP_RETURN (*query_fn)(VIP_NIC_HANDLE, VIP_NIC_ATTRIBUTES *);
typedef VIP_RETURN (*close_fn)(VIP_NIC_HANDLE);

int main(void)
{
	void *lib = dlopen("libvipl.so", RTLD_NOW);
	open_fn open_nic;
	query_fn query_nic;
	close_fn close_nic;
	VIP_NIC_HANDLE nic;
	VIP_NIC_ATTRIBUTES a;

	if (lib == NULL) {
		fprintf(stderr, "via_dlopen: %s\n", dlerror());
		return 1;
	}
	/* POSIX's way from a data pointer to a function pointer */
	*(void **)&open_nic = dlsym(lib, "VipOpenNic");
	*(void **)&query_nic = dlsym(lib, "VipQueryNic");
	*(void **)&close_nic = dlsym(lib, "VipCloseNic");
	if (open_nic == NULL || query_nic == NULL || close_nic == NULL) {
		fprintf(stderr, "via_dlopen: VIPL calls missing from libvipl.so\n");
		return 1;
	}
	if (open_nic((const VIP_CHAR *)"softrnic0", &nic) != VIP_SUCCESS ||
	    query_nic(nic, &a) != VIP_SUCCESS || strcmp((char *)a.Name, "softrnic0") != 0) {
		fprintf(stderr, "via_dlopen: softrnic0 did not open through libvipl.so\n");
		return 1;
	}
	close_nic(nic);
	printf("via_dlopen: %s through dlopen(\"libvipl.so\")\n", (char *)a.Name);
	return 0;
}

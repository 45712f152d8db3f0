/* placeholder: being written */
typedef int ddp_placeholder_ddp_hdr;

/* placeholder: being written */
typedef int rdmap_placeholder_rdmap_terminate;

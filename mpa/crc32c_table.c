/* placeholder: being written */
typedef int mpa_placeholder_crc32c_table;

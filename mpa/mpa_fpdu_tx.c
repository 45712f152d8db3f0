/* placeholder: being written */
typedef int mpa_placeholder_mpa_fpdu_tx;

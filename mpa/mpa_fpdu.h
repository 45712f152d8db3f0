#ifndef MPA_FPDU_H
#define MPA_FPDU_H
#endif

#ifndef MPA_FRAME_H
#define MPA_FRAME_H
#endif

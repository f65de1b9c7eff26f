/* The rft release. Plain C so that rft.h and tools can include it. */
#ifndef RFT_BASE_VERSION_H_
#define RFT_BASE_VERSION_H_

#define RFT_VERSION_MAJOR 0
#define RFT_VERSION_MINOR 1
#define RFT_VERSION_PATCH 0
#define RFT_VERSION_STRING "0.1.0"

#endif /* RFT_BASE_VERSION_H_ */

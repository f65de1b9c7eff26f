/* A C function the C++ test calls; see error_c_compat.c. */
#ifndef RFT_TESTS_UNIT_BASE_ERROR_C_COMPAT_H_
#define RFT_TESTS_UNIT_BASE_ERROR_C_COMPAT_H_

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the error API behaves as expected from C. */
int rft_test_error_header_from_c(void);

#ifdef __cplusplus
}
#endif

#endif /* RFT_TESTS_UNIT_BASE_ERROR_C_COMPAT_H_ */

// Sanitizer hooks read by every binary that links libpmix (rftrun, rft programs). Outside
// sanitizer builds these functions are never called.
//
// LeakSanitizer: libpmix 4.2 keeps allocations from PMIx_Init/PMIx_server_init (values,
// connection handlers, its runtime) past finalize; every leak seen in rft's tests had libpmix
// as its allocating frame.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpmix.so\n"; }

// ThreadSanitizer: at PMIx_server_finalize, libpmix's listener thread closes its stop pipe
// while the finalizing thread writes to it (both frames inside libpmix).
extern "C" const char* __tsan_default_suppressions() { return "race:libpmix.so\n"; }

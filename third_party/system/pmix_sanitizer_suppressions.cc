// Sanitizer hooks read by every binary that links libpmix (rftrun, rft programs, and so every
// binary that links UCX through rft). Outside
// sanitizer builds these functions are never called.
//
// LeakSanitizer: libpmix 4.2 keeps allocations from PMIx_Init/PMIx_server_init (values,
// connection handlers, its runtime) past finalize; every leak seen in rft's tests had libpmix
// as its allocating frame. UCX: the control plane leaves its UCX context (always) and, after a
// failure, its worker and endpoints to the process's end on purpose (detector/control_plane.cc:
// UCX 1.13 crashes or asserts when they are destroyed then); UCX keeps pointers to some of
// their allocations only in memory it maps itself, which LeakSanitizer does not scan.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpmix.so\nleak:libucs.so\nleak:libuct.so\nleak:libucp.so\n";
}

// ThreadSanitizer: at PMIx_server_finalize, libpmix's listener thread closes its stop pipe
// while the finalizing thread writes to it (both frames inside libpmix).
extern "C" const char* __tsan_default_suppressions() { return "race:libpmix.so\n"; }

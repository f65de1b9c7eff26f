// Forwards a child's stdout or stderr to rftrun's own, whole lines at a time, each prefixed
// with the child's label ("[3] "), so lines of different ranks never interleave mid-line.
#ifndef RFT_TOOLS_RFTRUN_OUTPUT_RELAY_H_
#define RFT_TOOLS_RFTRUN_OUTPUT_RELAY_H_

#include <string>
#include <string_view>

namespace rft::rftrun {

class OutputRelay {
 public:
  // `out_fd` is where lines go (1 or 2); `prefix` is prepended to each line ("" for none).
  OutputRelay(int out_fd, std::string prefix) : out_fd_(out_fd), prefix_(std::move(prefix)) {}

  // Reads what is available on `fd` (non-blocking). Returns false at end of file or on error,
  // after forwarding any unterminated last line.
  bool Drain(int fd);

  // Forwards `bytes`, holding back an unterminated tail until more arrives.
  void Feed(std::string_view bytes);
  // Forwards an unterminated tail as a line of its own.
  void Flush();

 private:
  void Write(std::string_view text);

  int out_fd_;
  std::string prefix_;
  std::string partial_;
  std::string scratch_;
};

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_OUTPUT_RELAY_H_

#pragma once
// Reading input files (configs, spike-time files) safely: only regular files below a size limit
// are read, and nothing blocks (a FIFO or a device is refused before any read).
#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include <sys/types.h>

namespace spikeforge::cli {

// Largest config or spike-time file that is read [bytes] (16 MiB); documented in docs/config.md.
constexpr uint64_t maxInputFileBytes = uint64_t{16} << 20;

// Why a file could not be read, as a sentence fragment ("it is a directory", "No such file or
// directory", …). Thrown by readInputFile; callers wrap it in their own error type.
class InputFileError : public std::exception {
public:
    InputFileError(std::string reason, bool atOpen)
        : m_reason(std::move(reason)), m_atOpen(atOpen) {}
    const char* what() const noexcept override { return m_reason.c_str(); }
    // "cannot open" (missing, no permission) rather than "cannot read" (wrong kind, too large).
    bool atOpen() const { return m_atOpen; }

private:
    std::string m_reason;
    bool m_atOpen;
};

// The whole content of `path`, which must be a regular file of at most `limit` bytes. Opens
// with O_NONBLOCK (a FIFO without writer does not block), checks the type with fstat, and reads
// at most limit + 1 bytes (a file that grows while being read is still caught).
std::string readInputFile(const std::string& path, uint64_t limit = maxInputFileBytes);

// Device and inode of an existing file (following links), to compare files by identity.
struct FileIdentity {
    dev_t device;
    ino_t inode;
    bool operator==(const FileIdentity&) const = default;
};
std::optional<FileIdentity> fileIdentity(const std::string& path);

} // namespace spikeforge::cli

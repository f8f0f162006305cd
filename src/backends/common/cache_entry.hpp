#pragma once
// A compiled-code cache entry file (the opencl backend's program binaries, the cuda backend's
// cubins): checked before any driver sees its bytes, so a truncated, foreign or corrupt file is
// rebuilt, never trusted. Layout: an 8-character magic naming the kind, the key (64 hex digits),
// the payload's size (16 hex digits), the payload's SHA-256 (64 hex digits), a newline, then the
// payload.
#include <filesystem>
#include <string>

namespace spikeforge::backends::cache {

enum class EntryState { Missing, Truncated, BadHeader, WrongKey, BadChecksum, Ok };
const char* describe(EntryState state);

// The entry file's bytes for `payload` under `key`, of the kind `magic` (8 characters).
std::string entryBytes(const std::string& magic, const std::string& key,
                       const std::string& payload);
// Checks `bytes` as an entry of kind `magic` for `key`; the payload goes to `payload` when Ok.
// Missing for no bytes at all.
EntryState parseEntry(const std::string& bytes, const std::string& magic, const std::string& key,
                      std::string& payload);
// parseEntry of the file at `path` (Missing when there is none).
EntryState readEntry(const std::filesystem::path& path, const std::string& magic,
                     const std::string& key, std::string& payload);
// Writes `bytes` to `path` through a temporary file of `key` in `dir` and a rename, so a reader
// sees the old file or the whole new one, never a part. BackendError when it cannot.
void publish(const std::filesystem::path& dir, const std::string& key,
             const std::filesystem::path& path, const std::string& bytes);

} // namespace spikeforge::backends::cache

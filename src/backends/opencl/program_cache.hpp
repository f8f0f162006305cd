#pragma once
// OpenCL program binaries cached by content hash, in the same per-user directory as the cpu
// backend's libraries (backends/common/cache_dir.hpp): an unchanged model on an unchanged device
// and driver skips the OpenCL C compiler. Entries are checked before OpenCL sees their bytes
// (header with key, size and SHA-256 of the binary); a bad entry is rebuilt, never trusted.
// See docs/backends.md, "Program cache".
#include "backends/common/cache_entry.hpp"
#include "backends/opencl/opencl_device.hpp"
#include "spikeforge/simulation.hpp"

#include <filesystem>
#include <string>

namespace spikeforge::opencl {

// SHA-256 (hex) over the source, the build options and everything that decides the binary on
// the device side: platform name and version, device name, vendor, version, OpenCL C version
// and driver version.
std::string programKey(const DeviceInfo& device, const std::string& source,
                       const std::string& options);

// A cache entry `<key>.clbin`: the layout of backends/common/cache_entry.hpp with the magic
// "SFCLBIN1" (docs/backends.md).
using backends::cache::describe;
using backends::cache::EntryState;

// Reads the entry at `path`; the binary goes to `binary` when the state is Ok.
EntryState readEntry(const std::filesystem::path& path, const std::string& key,
                     std::string& binary);
// The entry file's bytes for `binary` under `key`.
std::string entryBytes(const std::string& key, const std::string& binary);
// Publishes `<dir>/<key>.clbin` atomically (a temporary file, then rename).
void writeEntry(const std::filesystem::path& dir, const std::string& key,
                const std::string& binary);

// The device binary of a program built for exactly one device ("" when the platform gives none).
std::string programBinary(const Program& program);

// `source` built with `options` for `device`, from the cache when a valid entry exists (then
// info.cacheHit = true and info.compileSeconds = 0), else compiled and stored (cacheHit false,
// compileSeconds = the OpenCL C compiler's time [s]). info.sourcePath names `<key>.cl` in the
// cache directory, written before compiling so that a failed build can be inspected. The
// directory is BackendPreferences::cacheDir or its fallbacks, as for the cpu backend; builds
// of one key are serialised by its lock file (waiting at most prefs.compileTimeout + 60 s).
// A program that does not build is a BackendError carrying the build log and the source path.
Program buildCached(const OpenClDevice& device, const std::string& source,
                    const std::string& options, const BackendPreferences& prefs, BuildInfo& info);

// `source` built with `options` by the driver alone, for a platform that keeps a compiled-program
// cache of its own (PoCL: $POCL_CACHE_DIR, keyed by source, options and device). Asking PoCL for a
// program binary makes it compile every kernel once more in a generic form, which doubles a
// build; its own cache gives the same reuse without that. info.cacheHit is false (whether the
// driver's cache served is not observable), info.compileSeconds the driver's time [s];
// info.sourcePath names `<key>.cl` in the cache directory, as for buildCached.
Program buildFromSource(const OpenClDevice& device, const std::string& source,
                        const std::string& options, const BackendPreferences& prefs,
                        BuildInfo& info);

} // namespace spikeforge::opencl

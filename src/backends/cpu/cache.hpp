#pragma once
// The compile cache: a per-user directory of shared objects named by a SHA-256 key over
// everything that decides the compiled code, each library carrying its key, built at most once
// at a time per key (a lock file) and published by rename. See docs/internals.md, "Cache".
#include "backends/common/cache_dir.hpp"
#include "backends/cpu/compiler.hpp"
#include "spikeforge/simulation.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace spikeforge::cpu::cache {

// The directory, its lock and temporary files are shared with the opencl program cache.
using backends::cache::KeyLock;
using backends::cache::locate;
using backends::cache::prepare;
using backends::cache::removeStaleTemps;
using backends::cache::tempStem;

// SHA-256 (hex) over the source, the compiler's path, version and resolved target, and flags.
std::string computeKey(const std::string& source, const CompilerIdentity& compiler,
                       const std::vector<std::string>& flags);
// The text a library of `key` carries (the value of its exported `sf_cache_key`).
std::string keyMark(const std::string& key);
// The definition appended to the generated source to export that text.
std::string keySymbolSource(const std::string& key);

// What a file in the cache looks like, checked without loading it (dlopen of a truncated file
// can SIGBUS, and loading a foreign one runs its initialisers).
enum class FileState { Missing, Empty, NotElf, Truncated, WrongKey, Ok };
FileState inspectLibrary(const std::filesystem::path& lib, const std::string& key);
const char* describe(FileState state);

} // namespace spikeforge::cpu::cache

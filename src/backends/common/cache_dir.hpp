#pragma once
// The per-user cache directory every backend keeps its compiled code in (the cpu backend's
// shared objects, the opencl backend's program binaries), the per-key lock that lets one process
// build a key while others wait, and the temporary files that are published by rename. See
// docs/internals.md, "Cache".
#include "spikeforge/simulation.hpp"

#include <chrono>
#include <filesystem>
#include <string>

namespace spikeforge::backends::cache {

// BackendPreferences::cacheDir, else $SPIKEFORGE_CACHE, else $XDG_CACHE_HOME/spikeforge, else
// $HOME/.cache/spikeforge, else the home directory of the user's passwd entry. Never a shared
// directory: BackendError when none of these exists. Nothing is created.
std::filesystem::path locate(const BackendPreferences& prefs);

// locate(), created with mode 0700 when missing, then checked: a real directory (not a
// symlink), owned by this user, not writable by group or others. BackendError naming the path
// and the problem otherwise.
std::filesystem::path prepare(const BackendPreferences& prefs);

// An exclusive flock on `<dir>/<key>.lock`, held while a key is checked and built. Waits at
// most `timeout` seconds (0 = no limit) for another process, then BackendError.
class KeyLock {
public:
    KeyLock(const std::filesystem::path& dir, const std::string& key, double timeout);
    ~KeyLock();
    KeyLock(const KeyLock&) = delete;
    KeyLock& operator=(const KeyLock&) = delete;
    // False on a filesystem without locks: then nothing may be deleted on the lock's strength.
    bool held() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

// "<key>.tmp.<pid>.<random>": the stem of this build's temporary files.
std::string tempStem(const std::string& key);
// Removes temporary files of `key` left by a process that is gone or older than `maxAge`.
// Called with the key's lock held, so no live build of that key can own them.
void removeStaleTemps(const std::filesystem::path& dir, const std::string& key,
                      std::chrono::seconds maxAge);

} // namespace spikeforge::backends::cache

#pragma once
// Error types. A ModelError is the user's fault (bad model, bad config, bad snippet) and its
// message names the group, the field and, for code, the line and column. An InternalError is a
// bug in spikeforge itself.
#include <stdexcept>
#include <string>

namespace spikeforge {

class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class InternalError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

// A failure of the toolchain or the machine (compiler missing, dlopen failed, out of memory).
class BackendError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace spikeforge

#pragma once
// The standard headers of generated code, precompiled once per compiler and flags into the
// cache directory. Parsing <math.h> (which is <cmath> in C++) and <omp.h> was a third of a test
// model's compile; GCC reads the precompiled form in a few milliseconds. The generated source
// still includes its headers itself (it compiles on its own, as kept in the cache), and the
// precompiled form only makes those includes cheap: it never changes the compiled code.
#include "backends/cpu/compiler.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace spikeforge::cpu {

// Whether `identity` is a compiler the prelude is precompiled for: GCC (Clang finds precompiled
// headers by another name and format).
bool precompilesPrelude(const CompilerIdentity& identity);

// The header to pass with `-include` for `includes` (the generated source's include lines),
// its precompiled form beside it: built under a lock and published by rename when missing.
// Empty where there is none to use, and the caller compiles without one: a compiler
// precompilesPrelude refuses, or a build of the header
// that failed or timed out (the compile that follows reports any real problem). A compile that
// fails on reading the precompiled form runs again without it (cpu_backend.cpp).
std::filesystem::path precompiledPrelude(const std::string& compiler,
                                         const CompilerIdentity& identity,
                                         const std::vector<std::string>& flags,
                                         const std::string& includes,
                                         const std::filesystem::path& dir, double timeout);

// Removes the precompiled form of `header` (from precompiledPrelude) after a compile could not
// read it; the next build makes it again. A reader that has it open keeps its copy.
void discardPrecompiledPrelude(const std::filesystem::path& header);

} // namespace spikeforge::cpu

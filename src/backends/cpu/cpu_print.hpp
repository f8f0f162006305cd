#pragma once
// The CPU backend's printer of a kernel plan: C++ with OpenMP. Each body kind has its printer;
// they share a line-counting writer and the team-or-serial loop.
#include "backends/common/writer.hpp"
#include "codegen/plan.hpp"

#include <string>

namespace spikeforge::cpu {

using backends::Writer;

// `loop` (a for statement) run by a team of threads when the work is worth it, else plainly:
// an OpenMP region whose `if` is false still builds a team in libgomp, which costs more than a
// small step's whole work. The team is all `sfThreads` threads or none (sf_team): a loop with
// fewer iterations than threads leaves some idle rather than changing the team size.
void parallelFor(Writer& w, const std::string& work, unsigned grain, const std::string& clauses,
                 const std::string& loop);

// One merged group's function body (`grp`, `a` and `sfThreads` in scope, fields loaded).
void printNeuronUpdate(Writer& w, const codegen::NeuronUpdateBody& b);
void printPropagation(Writer& w, const codegen::PropagationBody& b);
void printCustomUpdate(Writer& w, const codegen::CustomUpdateBody& b);
void printInit(Writer& w, const codegen::InitBody& b);

} // namespace spikeforge::cpu

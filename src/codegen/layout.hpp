#pragma once
// Memory layout of merged-group structs and array elements, from the C type table (ctype.hpp).
// Declared here, reachable through plan.hpp: the runtime sizes arrays with it, a device lays out
// the tables it binds with it, and generated code static_asserts the same sizes.
#include "codegen/ctype.hpp"
#include "spikeforge/types.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace spikeforge::codegen {

struct FieldDecl; // plan.hpp

// Size (and alignment) of a field's or an element's C type [B]: pointers are 8 bytes on every
// backend spikeforge targets, scalars are resolved before (see resolveType). An unknown type is
// an InternalError.
size_t fieldSize(const std::string& ctype);

struct StructLayout {
    std::vector<size_t> offsets; // [B] one per field
    size_t size = 0;             // [B] padded to the largest alignment; at least 1
};
// C struct layout: each field aligned to its size, in declaration order.
StructLayout layoutOf(const std::vector<FieldDecl>& fields);

// The C element type for a snippet type under a precision ("scalar" → "float", "unsigned int" →
// "uint32_t"); a name the table does not know is returned unchanged.
std::string resolveType(const std::string& snippetType, Precision p);

} // namespace spikeforge::codegen

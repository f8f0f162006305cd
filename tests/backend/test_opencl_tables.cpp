// Merged-group tables on an OpenCL device: the host lays every field (buffers, numbers of each C
// type, bool) of every struct out as codegen::layoutOf says and the SIMT program's one
// table-store kernel writes the words and the buffers' addresses; a probe kernel appended to the
// generated source reads them back, after a first bind and after rebinds of single fields.
// Skips, saying why, without an OpenCL device.
#include "backend_fixture.hpp"
#include "backends/opencl/opencl_device.hpp"
#include "backends/opencl/opencl_dialect.hpp"
#include "backends/simt/simt.hpp"

#include "spikeforge/errors.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace spikeforge;
using namespace spikeforge::opencl;
using sftest::errorOf;
using sftest::expectContains;

namespace {

codegen::Plan tablePlan() {
    codegen::Plan plan;
    codegen::MergedGroupTable t;
    t.symbol = "mergedProbe0";
    t.structName = "MergedProbe0";
    t.fields = {{"data", "float*"},    {"count", "uint32_t"}, {"flag", "bool"},
                {"scale", "double"},   {"offset", "int64_t"}, {"small", "uint8_t"},
                {"empty", "uint32_t*"}};
    t.groupNames = {"A", "B", "C"};
    t.bindings.resize(3);
    plan.mergedGroups.push_back(t);
    // Structs of 4 bytes: one 8-byte word of the store holds two groups' values.
    codegen::MergedGroupTable narrow;
    narrow.symbol = "mergedProbe1";
    narrow.structName = "MergedProbe1";
    narrow.fields = {{"n", "uint32_t"}};
    narrow.groupNames = {"A", "B", "C"};
    narrow.bindings.resize(3);
    plan.mergedGroups.push_back(narrow);
    return plan;
}

// Copies every field of every struct into out[8 * group + k] as a double (buffers as their first
// element, a null buffer as -1).
constexpr const char* kProbe = R"(
__kernel void probe(__global struct MergedProbe0* t, __global double* out) {
    for (uint g = 0; g < 3u; g++) {
        out[8 * g + 0] = t[g].data ? (double)t[g].data[0] : -1.0;
        out[8 * g + 1] = (double)t[g].count;
        out[8 * g + 2] = (double)t[g].flag;
        out[8 * g + 3] = t[g].scale;
        out[8 * g + 4] = (double)t[g].offset;
        out[8 * g + 5] = (double)t[g].small;
        out[8 * g + 6] = t[g].empty ? 1.0 : -1.0;
        out[8 * g + 7] = 0.0;
    }
}
__kernel void probeNarrow(__global struct MergedProbe1* t, __global double* out) {
    for (uint g = 0; g < 3u; g++)
        out[g] = (double)t[g].n;
}
)";

} // namespace

TEST(OpenClTables, TheTableStoreWritesEveryFieldOfEveryGroup) {
    std::unique_ptr<OpenClDevice> device;
    try {
        device = OpenClDevice::open("");
    } catch (const BackendError& e) {
        GTEST_SKIP() << "no usable OpenCL device: " << e.what();
    }
    const codegen::Plan plan = tablePlan();
    const simt::Program program = simt::generate(plan, openclDialect(device->info()));
    EXPECT_EQ(program.source.find("sf_set_"), std::string::npos) << "a setter per table";
    device->load(plan, program,
                 device->buildProgram(program.source + kProbe, buildOptions(device->info())));

    using backends::FieldValue;
    std::vector<backends::Buffer> data;
    std::vector<std::vector<FieldValue>> values;
    for (int g = 0; g < 3; g++) {
        const float first = 10.0f + static_cast<float>(g);
        data.push_back(device->allocate(sizeof(float)));
        device->copyToDevice(data.back(), &first, sizeof first);
        values.push_back({FieldValue::ofBuffer(data.back()), FieldValue::ofNumber(4000000000.0 + g),
                          FieldValue::ofNumber(g % 2), FieldValue::ofNumber(0.1 * (g + 1)),
                          FieldValue::ofNumber(-5e12 - g), FieldValue::ofNumber(200 + g),
                          FieldValue::ofBuffer(nullptr)});
    }
    device->bindTable(0, values);

    // A second build of the same source lays the struct out the same way.
    Program probeProgram =
        device->buildProgram(program.source + kProbe, buildOptions(device->info()));
    Kernel probe = probeProgram.kernel("probe");
    backends::Buffer out = device->allocate(24 * sizeof(double));
    probe.setBuffer(0, device->tableBuffer(0));
    probe.setBuffer(1, out);
    device->enqueue(probe, 1, 1);
    std::vector<double> got(24);
    device->copyFromDevice(got.data(), out, 24 * sizeof(double));
    for (int g = 0; g < 3; g++) {
        SCOPED_TRACE("group " + std::to_string(g));
        EXPECT_EQ(got[8 * g + 0], 10.0 + g);
        EXPECT_EQ(got[8 * g + 1], 4000000000.0 + g); // beyond int32: stored as uint32
        EXPECT_EQ(got[8 * g + 2], g % 2);
        EXPECT_EQ(got[8 * g + 3], 0.1 * (g + 1));
        EXPECT_EQ(got[8 * g + 4], -5e12 - g);
        EXPECT_EQ(got[8 * g + 5], 200 + g);
        EXPECT_EQ(got[8 * g + 6], -1.0); // null buffer
    }
    // Rebinding one field (a dynamic parameter) changes only that group's struct.
    values[1][3] = FieldValue::ofNumber(7.5);
    device->bindTable(0, values);
    device->enqueue(probe, 1, 1);
    device->copyFromDevice(got.data(), out, 24 * sizeof(double));
    EXPECT_EQ(got[8 * 1 + 3], 7.5);
    EXPECT_EQ(got[8 * 0 + 3], 0.1);
    // Rebinding buffers: another buffer, a buffer where there was none, none where there was one.
    values[0][0] = FieldValue::ofBuffer(data[2]);
    values[1][6] = FieldValue::ofBuffer(data[0]);
    values[2][0] = FieldValue::ofBuffer(nullptr);
    device->bindTable(0, values);
    device->enqueue(probe, 1, 1);
    device->copyFromDevice(got.data(), out, 24 * sizeof(double));
    EXPECT_EQ(got[8 * 0 + 0], 12.0);
    EXPECT_EQ(got[8 * 1 + 0], 11.0);
    EXPECT_EQ(got[8 * 1 + 6], 1.0);
    EXPECT_EQ(got[8 * 2 + 0], -1.0);
    EXPECT_EQ(got[8 * 0 + 6], -1.0);
    for (int g = 0; g < 3; g++) { // the numbers are untouched
        EXPECT_EQ(got[8 * g + 1], 4000000000.0 + g);
        EXPECT_EQ(got[8 * g + 4], -5e12 - g);
    }

    // A buffer released and another allocated (whose handle may be the released one's, at
    // another device address): the rebind stores the new buffer's address.
    device->release(data[2]);
    const float fresh = 42.0f;
    data[2] = device->allocate(sizeof(float));
    device->copyToDevice(data[2], &fresh, sizeof fresh);
    values[0][0] = FieldValue::ofBuffer(data[2]);
    device->bindTable(0, values);
    device->enqueue(probe, 1, 1);
    device->copyFromDevice(got.data(), out, 24 * sizeof(double));
    EXPECT_EQ(got[8 * 0 + 0], 42.0);

    // Narrow structs share a word: rebinding one group keeps its neighbours.
    device->bindTable(
        1, {{FieldValue::ofNumber(7)}, {FieldValue::ofNumber(8)}, {FieldValue::ofNumber(9)}});
    device->bindTable(
        1, {{FieldValue::ofNumber(7)}, {FieldValue::ofNumber(80)}, {FieldValue::ofNumber(9)}});
    Kernel narrow = probeProgram.kernel("probeNarrow");
    narrow.setBuffer(0, device->tableBuffer(1));
    narrow.setBuffer(1, out);
    device->enqueue(narrow, 1, 1);
    device->copyFromDevice(got.data(), out, 3 * sizeof(double));
    EXPECT_EQ(got[0], 7.0);
    EXPECT_EQ(got[1], 80.0);
    EXPECT_EQ(got[2], 9.0);

    expectContains(errorOf<InternalError>([&] { device->bindTable(0, {values[0]}); }),
                   {"1 groups for a table of 3"});
    expectContains(errorOf<InternalError>([&] { device->bindTable(2, values); }), {"table 2"});
}

// Every OpenClDevice on one device uses the process's context for it (PoCL loads its kernel
// library into each new context), which outlives the devices: a buffer of one device survives
// another's end, and a device opened after all have gone builds and runs.
TEST(OpenClTables, DevicesShareTheProcesssContextWhichOutlivesThem) {
    std::unique_ptr<OpenClDevice> a, b;
    try {
        a = OpenClDevice::open("");
        b = OpenClDevice::open("");
    } catch (const BackendError& e) {
        GTEST_SKIP() << "no usable OpenCL device: " << e.what();
    }
    EXPECT_EQ(a->context(), b->context());
    const cl_context context = a->context();
    const backends::Buffer kept = a->allocate(sizeof(float));
    const float value = 3.5f;
    a->copyToDevice(kept, &value, sizeof value);
    b.reset();
    float back = 0.0f;
    a->copyFromDevice(&back, kept, sizeof back);
    EXPECT_EQ(back, 3.5f);
    a.reset();

    const auto c = OpenClDevice::open("");
    EXPECT_EQ(c->context(), context);
    const Program program = c->buildProgram(
        "__kernel void twice(__global float* x) { x[0] = 2.0f * x[0]; }", buildOptions(c->info()));
    Kernel twice = program.kernel("twice");
    const backends::Buffer x = c->allocate(sizeof(float));
    c->copyToDevice(x, &value, sizeof value);
    twice.setBuffer(0, x);
    c->enqueue(twice, 1, 1);
    c->copyFromDevice(&back, x, sizeof back);
    EXPECT_EQ(back, 7.0f);
}

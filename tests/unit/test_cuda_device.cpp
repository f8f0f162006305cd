// Built only with the cuda backend (file name test_cuda_*: CMake leaves it out otherwise).
// CudaDevice without a GPU: the device is written against a DriverApi, so it runs here on the
// mock driver of cuda_mock_driver.hpp, a small library compiled by the test that keeps "device"
// memory in host memory and records every launch (with the table address and step it was given)
// and every graph. What the kernels would compute cannot be checked here; what the device hands
// the driver can: zero-fills, copies, the table structs in C layout with device addresses, grid
// and block sizes, and graph capture, update and replay with each step's own arguments.
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_driver.hpp"
#include "codegen/layout.hpp"
#include "cuda_mock_driver.hpp"
#include "spikeforge/errors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

using cuda_mock::mock;

// A plan with one table {float* p; uint32_t n; bool flag;} of two groups and a program whose
// kernel 0 is one launch of 256 x 2 work-items in blocks of 128, plus an empty launch.
struct Fixture {
    codegen::Plan plan;
    simt::Program program;
    Fixture() {
        codegen::MergedGroupTable t;
        t.fields = {{"p", "float*"}, {"n", "uint32_t"}, {"flag", "bool"}};
        t.groupNames = {"A", "B"};
        plan.mergedGroups.push_back(t);
        program.kernels = {
            {simt::Launch{"k0", {0}, 256, 2, 128}, simt::Launch{"k_empty", {0}, 0, 1, 128}}};
    }
};

cuda::DeviceInfo mockInfo(const cuda::DriverApi& api) {
    return cuda::queryDevice(api, 0);
}

} // namespace

TEST(CudaDeviceMock, QueryReadsTheAttributes) {
    SKIP_WITHOUT_MOCK();
    const cuda::DeviceInfo info = mockInfo(*mock().api);
    EXPECT_EQ(info.name, "Mock GPU");
    EXPECT_EQ(info.major, 9);
    EXPECT_EQ(info.minor, 0);
    EXPECT_EQ(info.maxThreadsPerBlock, 1024);
    EXPECT_EQ(info.maxGridY, 65535);
}

TEST(CudaDeviceMock, BuffersAreZeroFilledAndCopiesRoundTrip) {
    SKIP_WITHOUT_MOCK();
    const int live = mock().count("mock_live");
    {
        cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
        for (const size_t bytes : {size_t(7), size_t(1000)}) { // byte and word fills
            backends::Buffer b = dev.allocate(bytes);
            std::string back(bytes, 'x');
            dev.copyFromDevice(back.data(), b, bytes);
            EXPECT_EQ(back, std::string(bytes, '\0')) << bytes << " bytes";
            std::string data(bytes, '\0');
            for (size_t i = 0; i < bytes; i++)
                data[i] = static_cast<char>(i * 7 + 1);
            dev.copyToDevice(b, data.data(), bytes);
            dev.copyFromDevice(back.data(), b, bytes);
            EXPECT_EQ(back, data);
        }
        EXPECT_EQ(dev.allocate(0), nullptr);
        // [B] free (1 GiB in the mock) plus the 1007 bytes held
        EXPECT_EQ(dev.memoryCapacity(), (size_t(1) << 30) + 1007);
        EXPECT_EQ(dev.transfers().toDevice, 2u);
        EXPECT_EQ(dev.transfers().fromDevice, 4u);
    }
    EXPECT_EQ(mock().count("mock_live"), live); // everything freed with the device
}

TEST(CudaDeviceMock, TablesAreCStructsOfDeviceAddresses) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
    dev.load(f.plan, f.program, "CUBIN");
    backends::Buffer data = dev.allocate(64);
    using V = backends::FieldValue;
    dev.bindTable(0, {{V::ofBuffer(data), V::ofNumber(7), V::ofNumber(1)},
                      {V::ofBuffer(nullptr), V::ofNumber(9), V::ofNumber(0)}});
    const size_t before = mock().ops();
    codegen::abi::StepArgs args;
    args.step = 42;
    dev.launch(0, args);
    ASSERT_EQ(mock().ops(), before + 1); // the empty launch is skipped
    EXPECT_EQ(mock().name(before), "k0");
    EXPECT_EQ(mock().gridX(before), 2u);   // grid x = 256 / 128
    EXPECT_EQ(mock().gridY(before), 2u);   // grid y = dim1
    EXPECT_EQ(mock().block(before), 128u); // block
    EXPECT_EQ(mock().step(before), 42u);   // step argument
    // The table as the kernel would read it (mock device memory is host memory).
    const auto* table = reinterpret_cast<const unsigned char*>(mock().table(before));
    const codegen::StructLayout layout = codegen::layoutOf(f.plan.mergedGroups[0].fields);
    uint64_t p = 0;
    uint32_t n = 0;
    std::memcpy(&p, table + layout.offsets[0], 8);
    std::memcpy(&n, table + layout.offsets[1], 4);
    EXPECT_EQ(p, reinterpret_cast<uintptr_t>(data));
    EXPECT_EQ(n, 7u);
    EXPECT_EQ(table[layout.offsets[2]], 1u);
    std::memcpy(&p, table + layout.size + layout.offsets[0], 8);
    std::memcpy(&n, table + layout.size + layout.offsets[1], 4);
    EXPECT_EQ(p, 0u);
    EXPECT_EQ(n, 9u);
    EXPECT_EQ(table[layout.size + layout.offsets[2]], 0u);
    EXPECT_EQ(dev.transfers().toDevice, 0u); // binding is not a counted transfer
}

TEST(CudaDeviceMock, ModuleLoadErrorNamesTheCallAndTheDriversMessage) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
    try {
        dev.load(f.plan, f.program, "not a cubin");
        ADD_FAILURE() << "no BackendError";
    } catch (const BackendError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("cuModuleLoadData failed: CUDA_ERROR_MOCK (mock error)"),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("sm_90"), std::string::npos) << msg;
    }
}

TEST(CudaDeviceMock, GraphsReplayEveryStepWithItsOwnArguments) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 4);
    ASSERT_TRUE(dev.graphsEnabled());
    dev.load(f.plan, f.program, "CUBIN");
    using V = backends::FieldValue;
    dev.bindTable(0, {{V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)},
                      {V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)}});
    const size_t before = mock().ops();
    const int inst = mock().count("mock_instantiations"), upd = mock().count("mock_updates");
    const uint64_t graphs = cuda::graphLaunches();
    codegen::abi::StepArgs first;
    first.step = 5;
    first.rngStep = 105;    // a later trial: random draws keyed past the step index
    const double dt = 0.25; // [ms]
    dev.runSteps({0}, first, 10, dt);
    // Pieces of 4, 4 and 2 steps: two graphs instantiated (4 and 2 steps), the second piece
    // of 4 replayed through an update of the first.
    EXPECT_EQ(cuda::graphLaunches() - graphs, 3u);
    EXPECT_EQ(mock().count("mock_instantiations") - inst, 2);
    EXPECT_EQ(mock().count("mock_updates") - upd, 1);
    ASSERT_EQ(mock().ops(), before + 10);
    for (size_t i = 0; i < 10; i++) {
        const size_t at = before + i;
        EXPECT_EQ(mock().step(at), 5 + i) << "launch " << i;           // step
        EXPECT_EQ(mock().timeUs(at), (5 + i) * 250) << "launch " << i; // t [µs]
        EXPECT_EQ(mock().graph(at), 1) << "launch " << i;              // from a graph
        EXPECT_EQ(mock().rng(at), 105 + i) << "launch " << i;          // rngStep
    }
    // One step alone runs as plain launches.
    dev.runSteps({0}, first, 1, dt);
    ASSERT_EQ(mock().ops(), before + 11);
    EXPECT_EQ(mock().graph(before + 10), 0);
}

TEST(CudaDeviceMock, PullsLargerThanTheStagingBufferArriveWhole) {
    SKIP_WITHOUT_MOCK();
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
    const size_t bytes = (size_t(64) << 20) + 100; // [B] one piece past the 64 MiB staging buffer
    std::vector<uint32_t> data(bytes / 4);
    for (size_t i = 0; i < data.size(); i++)
        data[i] = static_cast<uint32_t>(i * 2654435761u);
    backends::Buffer b = dev.allocate(bytes);
    dev.copyToDevice(b, data.data(), bytes);
    std::vector<uint32_t> back(data.size(), 0);
    dev.copyFromDevice(back.data(), b, bytes);
    EXPECT_TRUE(back == data);
    backends::Buffer copy = dev.allocate(bytes);
    dev.copyBuffer(copy, b, bytes);
    std::fill(back.begin(), back.end(), 0u);
    dev.copyFromDevice(back.data(), copy, bytes);
    EXPECT_TRUE(back == data);
    const int live = mock().count("mock_live");
    dev.release(b);
    EXPECT_EQ(mock().count("mock_live"), live - 1);
    EXPECT_EQ(dev.transfers().toDevice, 1u);     // copyBuffer is not a host transfer
    EXPECT_THROW(dev.release(b), InternalError); // no longer this device's
}

// Busy time on the mock clock, where a launch runs 1 ms and a copy 0.5 ms: each timed call's
// event pair gives its span, host gaps between calls are not counted.
TEST(CudaDeviceMock, BusyTimeSumsTheElapsedTimeOfEachCall) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
    dev.load(f.plan, f.program, "CUBIN");
    using V = backends::FieldValue;
    dev.bindTable(0, {{V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)},
                      {V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)}});
    backends::Buffer a = dev.allocate(64), b = dev.allocate(64);
    ASSERT_EQ(dev.busySeconds(), 0.0);       // allocation and binding are not device work
    const size_t before = mock().launches(); // launches only: the copy below is an op too
    dev.runSteps({0}, codegen::abi::StepArgs{}, 10, 0.1);
    mock().hostGap(500.0); // [ms]
    dev.launch(0, codegen::abi::StepArgs{});
    mock().hostGap(500.0);
    dev.copyBuffer(b, a, 64);
    const size_t launches = mock().launches() - before;
    EXPECT_EQ(launches, 11u);
    const double expected = (double(launches) * 1.0 + 0.5) * 1e-3; // [s]
    EXPECT_NEAR(dev.busySeconds().value(), expected, 1e-6);
    EXPECT_EQ(dev.pendingBusyEvents(), 0u); // read at the sync point busySeconds is
}

// Pairs are read once finished and their events reused: a long loop without a sync point keeps
// a bounded number pending (waiting for the oldest at the cap) and creates a bounded number of
// events, and every event is destroyed with the device.
TEST(CudaDeviceMock, BusyEventsAreReusedBoundedAndFreed) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    const int live = mock().count("mock_events");
    {
        cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
        dev.load(f.plan, f.program, "CUBIN");
        using V = backends::FieldValue;
        dev.bindTable(0, {{V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)},
                          {V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)}});
        const int made = mock().count("mock_events_made");
        const int syncs = mock().count("mock_event_syncs");
        constexpr int kCalls = 1000;
        // Finished at once: every call reads the pair before it and reuses its events.
        for (int i = 0; i < kCalls; i++)
            dev.launch(0, codegen::abi::StepArgs{});
        EXPECT_LE(mock().count("mock_events_made") - made, 4);
        // Never finished until waited for: pending pairs stop growing at the cap.
        mock().notReady(true);
        size_t most = 0;
        for (int i = 0; i < kCalls; i++) {
            dev.launch(0, codegen::abi::StepArgs{});
            most = std::max(most, dev.pendingBusyEvents());
        }
        EXPECT_LE(most, 64u);
        EXPECT_GT(mock().count("mock_event_syncs") - syncs, 0); // waited at the cap
        EXPECT_LE(mock().count("mock_events_made") - made, 2 * 65 + 4);
        // Every launch counted once (1 ms each), waited for or read at the end.
        EXPECT_NEAR(dev.busySeconds().value(), 2 * kCalls * 1e-3, 1e-6);
        mock().notReady(false);
    }
    EXPECT_EQ(mock().count("mock_events"), live);
}

// A driver without event timing: busy time is unknown, not zero.
TEST(CudaDeviceMock, BusyTimeIsUnknownWithoutEventTiming) {
    SKIP_WITHOUT_MOCK();
    cuda::DriverApi api = *mock().api;
    api.cuEventElapsedTime_v2 = nullptr;
    ASSERT_FALSE(api.hasEventTiming());
    ASSERT_TRUE(mock().api->hasEventTiming());
    cuda::CudaDevice dev(api, mockInfo(api), 0);
    backends::Buffer a = dev.allocate(64), b = dev.allocate(64);
    dev.copyBuffer(b, a, 64);
    EXPECT_FALSE(dev.busySeconds().has_value());
}

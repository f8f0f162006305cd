// host_fraction over fit()'s epochs: measured on the cpu backend, between 0 and 1, each epoch's
// device time within its wall time; unknown (nullopt) as soon as one epoch is unmeasured.
#include "spikeforge/train/fit.hpp"
#include "unit/test_fit_support.hpp"

#include <gtest/gtest.h>

using namespace spikeforge::train;

TEST(FitHostFraction, MeasuredPerEpochOnCpu) {
    auto compiler = fit_test::yinYangCompiler();
    const EventDataset train = makeYinYang(96, 3), validation = makeYinYang(32, 4);
    FitOptions o;
    o.epochs = 2;
    o.learningRate = 1e-2;
    const auto reports = fit(*compiler, train, &validation, o, {});
    ASSERT_EQ(reports.size(), 2u);
    for (const EpochReport& r : reports) {
        ASSERT_TRUE(r.deviceSeconds.has_value()) << "the cpu backend measures busy time";
        EXPECT_GT(*r.deviceSeconds, 0.0);
        EXPECT_LE(*r.deviceSeconds, r.seconds);
    }
    const auto fraction = hostFraction(reports);
    ASSERT_TRUE(fraction.has_value());
    EXPECT_GT(*fraction, 0.0);
    EXPECT_LT(*fraction, 1.0);
    // The definition, from the reports: 1 - device time / wall time.
    const double expected = 1.0 - (*reports[0].deviceSeconds + *reports[1].deviceSeconds) /
                                      (reports[0].seconds + reports[1].seconds);
    EXPECT_NEAR(*fraction, expected, 1e-12);

    auto unmeasured = reports;
    unmeasured[1].deviceSeconds.reset();
    EXPECT_FALSE(hostFraction(unmeasured).has_value());
    EXPECT_FALSE(hostFraction({}).has_value());
}

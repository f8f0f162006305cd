#pragma once
// Helpers shared by the dataset tests (tests/unit/test_dataset_*.cpp).
#include <gtest/gtest.h>

#include <string>

namespace dataset_test {

// The message of the exception of type E that `f` throws; a failure when it throws nothing (any
// other exception type escapes and fails the test).
template <class E, class F> std::string errorOf(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected an exception";
    return "";
}

// Like gmock's HasSubstr, but the test binary links GoogleTest only.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "\"" << text << "\" does not contain \"" << part << "\"";
}

} // namespace dataset_test

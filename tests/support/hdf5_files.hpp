#pragma once
// Pieces of SHD-layout HDF5 files for tests (tests/unit/test_dataset_hdf5.cpp,
// tests/cli/test_cli_train_hdf5.cpp). Include only where <hdf5.h> is available.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <string>
#include <vector>

namespace hdf5_files {

// One variable-length dataset of `rows` stored as `fileBase`, given in memory as `memBase`.
template <class T>
void writeVlen(hid_t loc, const char* name, hid_t fileBase, hid_t memBase,
               const std::vector<std::vector<T>>& rows) {
    std::vector<hvl_t> buffer;
    for (const auto& row : rows)
        buffer.push_back(hvl_t{row.size(), (void*)row.data()});
    const hsize_t n = rows.size();
    const hid_t fileType = H5Tvlen_create(fileBase), memType = H5Tvlen_create(memBase);
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t set = H5Dcreate2(loc, name, fileType, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(set, 0) << name;
    EXPECT_GE(H5Dwrite(set, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()), 0) << name;
    H5Dclose(set);
    H5Sclose(space);
    H5Tclose(fileType);
    H5Tclose(memType);
}

// Class names, as the published files carry them (extra/keys, fixed-length strings): "c0", …
inline void writeKeys(hid_t file, int count) {
    const hid_t group = H5Gcreate2(file, "extra", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 8);
    const auto n = static_cast<hsize_t>(count);
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t set = H5Dcreate2(group, "keys", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    std::vector<char> names(8 * n, '\0');
    for (int k = 0; k < count; k++) {
        const std::string name = "c" + std::to_string(k % 1000000);
        std::copy(name.begin(), name.end(), names.begin() + 8 * k);
    }
    H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, names.data());
    H5Dclose(set);
    H5Sclose(space);
    H5Tclose(type);
    H5Gclose(group);
}

} // namespace hdf5_files

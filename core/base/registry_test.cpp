#include "core/base/registry.hpp"

#include <gtest/gtest.h>

#include "core/platform/backend.hpp"
#include "core/engine/decomposition.hpp"
#include "core/engine/transport.hpp"

namespace fftune {
namespace {

struct Shape {
    static constexpr const char* kind = "shape";
    virtual ~Shape() = default;
    virtual int sides() const = 0;
};
struct Square : Shape {
    int sides() const override { return 4; }
};
}  // namespace

// The library instantiates its own registries; a new interface defines its table once.
template <>
Registry<Shape>& Registry<Shape>::instance() {
    static Registry registry;
    return registry;
}

namespace {

TEST(Registry, CreatesByNameAndRejectsDuplicatesAndUnknowns) {
    ASSERT_TRUE((register_variant<Shape, Square>("square")));
    EXPECT_EQ(Registry<Shape>::instance().create("square")->sides(), 4);
    EXPECT_THROW((register_variant<Shape, Square>("square")), std::logic_error);
    try {
        Registry<Shape>::instance().create("circle");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "unknown shape 'circle' (allowed: square)");
    }
}

TEST(Registry, TheLibraryRegistersItsVariants) {
    for (const char* d : {"slab_2d1d", "slab_1d2d", "pencil", "reference_3d"})
        EXPECT_TRUE(Registry<Decomposition>::instance().contains(d)) << d;
    for (const char* t : {"p2p_sync", "p2p_streams", "p2p_mpi_type", "a2a_sync", "a2a_mpi_type"})
        EXPECT_TRUE(Registry<Transport>::instance().contains(t)) << t;
    EXPECT_TRUE(Registry<Backend>::instance().contains("fftw"));
}

}  // namespace
}  // namespace fftune

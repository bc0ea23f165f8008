#include <catch2/catch.hpp>  // placeholder: tests come with the implementation

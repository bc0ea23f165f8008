#include <catch2/catch.hpp>

#include "pipeline/digest.hpp"

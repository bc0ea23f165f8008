#include <catch2/catch.hpp>

#include "spill/spill_file.hpp"

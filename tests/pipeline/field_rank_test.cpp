#include <catch2/catch.hpp>

#include "pipeline/field_rank.hpp"

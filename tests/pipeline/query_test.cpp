#include <catch2/catch.hpp>

#include "pipeline/query.hpp"

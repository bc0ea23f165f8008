#include <catch2/catch.hpp>

#include "pipeline/text_chunk.hpp"

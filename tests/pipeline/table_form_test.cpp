#include <catch2/catch.hpp>

#include "pipeline/table_form.hpp"

#include "pipeline/field_rank.hpp"

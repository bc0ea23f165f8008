#include "pipeline/query.hpp"

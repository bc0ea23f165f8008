#include "pipeline/digest.hpp"

#include "spill/spill_file.hpp"

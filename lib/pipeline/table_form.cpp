#include "pipeline/table_form.hpp"

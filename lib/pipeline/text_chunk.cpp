#include "pipeline/text_chunk.hpp"

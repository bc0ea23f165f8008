// Boost.JSON compiled into ctxguard (sanitized and fuzzing builds only, see CMakeLists.txt): the
// library's own sources, so its parser is instrumented like the rest of the code.
#include <boost/json/src.hpp>

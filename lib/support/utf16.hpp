// UTF-8 to UTF-16 and back, for Windows' wide-character APIs: the program's strings are UTF-8,
// Windows' are UTF-16. Defined in the Windows build only (platform_file_win32.cpp).
#pragma once

#include <string>
#include <string_view>

namespace ctxguard::platform {

std::wstring widen(std::string_view text);
std::string narrow(std::wstring_view text);

}  // namespace ctxguard::platform

// fmt's compiled part, built once for the whole tree.
//
// The programs link the C++ runtime statically (src/CMakeLists.txt), so
// Debian's libfmt.so, which needs libstdc++.so, is not linked; and building
// fmt header-only compiled its formatting engine again in every file that
// formats (a third of such a file's compile time). This file compiles it
// once: without FMT_HEADER_ONLY, format-inl.h defines fmt's out-of-line
// functions here, and the templates format.h declares extern are
// instantiated for the character types it names.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template auto decimal_point_impl<wchar_t>(locale_ref) -> wchar_t;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;

}  // namespace detail
FMT_END_NAMESPACE

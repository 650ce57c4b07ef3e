# How sinter's libraries are declared, so that adding one (or one more dependency) is one
# call in one place and the installed CMake package follows by itself.
#
#   sinter_dependency(<Package> [args...])
#       find_package(<Package> [args...] REQUIRED) here, and the same find_dependency() in
#       the installed sinterConfig.cmake, for packages whose targets sinter's libraries link
#       (so every project that links sinter needs them too).
#
#   sinter_add_library(<name> SOURCES <files...> PUBLIC_HEADERS <files...>)
#       A static library sinter_<name> (sinter::<name>), part of the umbrella target
#       sinter::sinter; installed with its public headers under include/sinter/<dir>/, where
#       <dir> is its folder in the source tree, so `#include "<dir>/<header>"` works alike in
#       the source tree and in an install.

include_guard(GLOBAL)

macro(sinter_dependency package)
  find_package(${package} ${ARGN} REQUIRED)
  set(_sinter_dependency_args ${package} ${ARGN})
  list(JOIN _sinter_dependency_args " " _sinter_dependency_args)
  set_property(GLOBAL APPEND_STRING PROPERTY SINTER_FIND_DEPENDENCIES
    "find_dependency(${_sinter_dependency_args})\n")
  unset(_sinter_dependency_args)
endmacro()

function(sinter_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;PUBLIC_HEADERS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "sinter_add_library(${name}): unexpected ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(target sinter_${name})
  add_library(${target} STATIC ${arg_SOURCES})
  add_library(sinter::${name} ALIAS ${target})
  # Position-independent, so that users can link sinter into shared libraries of their own.
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} POSITION_INDEPENDENT_CODE ON)
  set_property(GLOBAL APPEND PROPERTY SINTER_LIBRARIES ${target})
  if(SINTER_INSTALL)
    file(RELATIVE_PATH dir ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
    install(TARGETS ${target} EXPORT sinterTargets
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
    install(FILES ${arg_PUBLIC_HEADERS}
      DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sinter/${dir} COMPONENT development)
  endif()
endfunction()

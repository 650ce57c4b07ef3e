# Install rules, the CMake package and the Debian package settings (included from the top
# CMakeLists.txt when SINTER_INSTALL is on).
#
#   <prefix>/bin/sinterc, sinter-cache                      the tools
#   <prefix>/lib/libsinter_*.a                              the libraries (templates inside)
#   <prefix>/include/sinter/sinter.h                        every public header at once
#   <prefix>/include/sinter/{ir,compiler,runtime,...}/*.h   the public headers
#   <prefix>/lib/cmake/sinter/sinterConfig.cmake            find_package(sinter), with the
#                                                           version file and the targets
#   <prefix>/share/doc/sinter/                              README and the user docs
#
# Components: `development` (libraries, headers, CMake package) and `tools`.

include(CMakePackageConfigHelpers)

set(SINTER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sinter)

install(TARGETS sinter sinter_deps EXPORT sinterTargets COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/include/sinter/sinter.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sinter COMPONENT development)

if(SINTER_BUILD_TOOLS)
  # The tools load NVRTC from the CUDA toolkit, which is not in the loader's default path on
  # every machine; the installed binaries keep the directory they were linked against.
  set_target_properties(sinterc sinter-cache PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS sinterc sinter-cache EXPORT sinterTargets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/quickstart.md
  ${PROJECT_SOURCE_DIR}/docs/embedding.md ${PROJECT_SOURCE_DIR}/docs/ir.md
  ${PROJECT_SOURCE_DIR}/docs/tools.md ${PROJECT_SOURCE_DIR}/docs/cache.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT development)

install(EXPORT sinterTargets NAMESPACE sinter:: DESTINATION ${SINTER_CMAKE_DIR}
  COMPONENT development)
get_property(SINTER_FIND_DEPENDENCIES GLOBAL PROPERTY SINTER_FIND_DEPENDENCIES)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sinterConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sinterConfig.cmake INSTALL_DESTINATION ${SINTER_CMAKE_DIR})
# 0.x releases promise nothing across minor versions: find_package(sinter 0.1) accepts 0.1.*
# only; from 1.0 on, any later release of the same major version.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(sinter_compatibility SameMinorVersion)
else()
  set(sinter_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sinterConfigVersion.cmake
  COMPATIBILITY ${sinter_compatibility})
install(FILES ${PROJECT_BINARY_DIR}/sinterConfig.cmake
  ${PROJECT_BINARY_DIR}/sinterConfigVersion.cmake
  DESTINATION ${SINTER_CMAKE_DIR} COMPONENT development)

# The Debian package: sinter_<version>_amd64.deb, everything under /usr. scripts/package-deb.sh
# builds it and fills in Depends from the tools' shared libraries (dpkg-shlibdeps).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sinter)
set(CPACK_PACKAGE_VENDOR "sinter")
set(CPACK_PACKAGE_CONTACT "sinter developers <sinter@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "sinter fuses chains of neural-network ops (convolutions, GEMMs, norms, reductions,\n\
elementwise ops) into few CUDA kernels specialised for exact shapes, compiles them at run\n\
time with NVRTC and runs them through the CUDA driver API. This package holds the sinterc\n\
and sinter-cache tools, the static libraries, the C++ headers and the CMake package\n\
(find_package(sinter)). NVRTC comes from the CUDA 13 toolkit (libnvrtc.so.13), which is not\n\
a Debian package; the GPU driver is needed only to run kernels.")
# Building against the package needs what sinterConfig.cmake finds.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "cmake, g++, llvm-14-dev, zlib1g-dev, libtinfo-dev, libprotobuf-dev")
include(CPack)

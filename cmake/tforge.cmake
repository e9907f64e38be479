# Helpers shared by the subsystems' CMakeLists.

# tforge_add_plugin(NAME SOURCES... [LIBS libraries...]): a dlopen module `tforge-NAME.so` in the
# plugin folder (built and installed), plus an object library NAME_static whose entry is renamed
# to tforge_static_NAME, for programs that register plugins statically (tests). LIBS are linked
# privately into the module and passed on to the users of NAME_static.
function(tforge_add_plugin name)
  cmake_parse_arguments(P "" "" "LIBS" ${ARGN})
  set(sources ${P_UNPARSED_ARGUMENTS})
  add_library(tforge-${name} MODULE ${sources})
  set_target_properties(tforge-${name} PROPERTIES PREFIX ""
                        LIBRARY_OUTPUT_DIRECTORY "${TFORGE_PLUGIN_BUILD_DIR}")
  target_include_directories(tforge-${name} PRIVATE ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_SOURCE_DIR}/sdk)
  target_link_libraries(tforge-${name} PRIVATE ${P_LIBS} m)
  install(TARGETS tforge-${name} LIBRARY DESTINATION ${TFORGE_PLUGIN_INSTALL_DIR})
  add_library(${name}_static OBJECT ${sources})
  target_include_directories(${name}_static PUBLIC ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_SOURCE_DIR}/sdk)
  target_compile_definitions(${name}_static PRIVATE TFORGE_PLUGIN_ENTRY_NAME=tforge_static_${name})
  if(P_LIBS)
    target_link_libraries(${name}_static PUBLIC ${P_LIBS})
  endif()
endfunction()

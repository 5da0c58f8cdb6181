/* smd/export.h: symbol visibility and attributes for the public API. */
#ifndef SMD_EXPORT_H
#define SMD_EXPORT_H

#if defined(SWIG) || defined(SMD_STATIC)
#define SMD_API
#elif defined(_WIN32)
#if defined(SMD_BUILDING)
#define SMD_API __declspec(dllexport)
#else
#define SMD_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define SMD_API __attribute__((visibility("default")))
#else
#define SMD_API
#endif

/* Fallible functions: the returned smd_error* must be looked at (and freed). */
#if defined(__GNUC__) && !defined(SWIG)
#define SMD_MUST_USE __attribute__((warn_unused_result))
#define SMD_DEPRECATED __attribute__((deprecated))
#else
#define SMD_MUST_USE
#define SMD_DEPRECATED
#endif

#if defined(__cplusplus) && !defined(SWIG)
#define SMD_NOEXCEPT noexcept
#else
#define SMD_NOEXCEPT
#endif

#endif /* SMD_EXPORT_H */

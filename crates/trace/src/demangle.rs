//! Kernel names: C++ demangling and PyProf's short name.
//!
//! PyProf demangled nvprof's mangled kernel names with `cxxfilt`, i.e. the
//! C++ runtime's `__cxa_demangle`, whose output equals GNU `c++filt`. The
//! pure-Rust `cpp_demangle` crate agrees with it on only about half of the
//! corpus names (integer literals, lambdas), so on Linux/glibc rprof calls
//! libstdc++'s `__cxa_demangle` directly (it is on every such machine that
//! can build rprof) and gets GNU's text byte for byte; elsewhere it falls
//! back to `cpp_demangle`.

/// Demangle an Itanium C++ name. `None` when `name` is not a valid mangled
/// name (callers then keep the raw text, as PyProf HEAD does).
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    imp::demangle(name)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    use std::ffi::{CStr, CString, c_char, c_int, c_void};

    #[link(name = "stdc++")]
    unsafe extern "C" {
        fn __cxa_demangle(
            mangled: *const c_char,
            out: *mut c_char,
            len: *mut usize,
            status: *mut c_int,
        ) -> *mut c_char;
        fn free(p: *mut c_void);
    }

    pub fn demangle(name: &str) -> Option<String> {
        let c = CString::new(name).ok()?;
        let mut status: c_int = 0;
        // SAFETY: `c` is a valid NUL-terminated string that outlives the
        // call; a null output buffer asks the function to malloc the result,
        // which we copy and free exactly once. On failure it returns null.
        unsafe {
            let p = __cxa_demangle(
                c.as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut status,
            );
            if p.is_null() {
                return None;
            }
            let text = CStr::from_ptr(p).to_string_lossy().into_owned();
            free(p.cast());
            (status == 0).then_some(text)
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    pub fn demangle(name: &str) -> Option<String> {
        cpp_demangle::Symbol::new(name)
            .ok()
            .and_then(|s| s.demangle().ok())
    }
}

/// PyProf's short kernel name (semantics §3.5): the text before the first
/// `<`, with `void `, `at::`, `cuda::`, `native::` and `(anonymous
/// namespace)::` removed in that order, then the text before the first `(`.
pub fn short_name_pyprof(long: &str) -> String {
    let head = long.split('<').next().unwrap_or("");
    let head = head
        .replace("void ", "")
        .replace("at::", "")
        .replace("cuda::", "")
        .replace("native::", "")
        .replace("(anonymous namespace)::", "");
    head.split('(').next().unwrap_or("").to_owned()
}

/// rprof's short name: PyProf's rule, with three fixes (docs/compat.md):
/// - nsys's own demangler writes `<unnamed>` for anonymous namespaces
///   (PyProf cuts at that `<` and prints an empty name);
/// - the namespaces `at::`, `cuda::` and `native::` are removed only as
///   whole components (PyProf's plain text replacement turns
///   `genericReformat::copyVectorizedKernel` into
///   `genericReformcopyVectorizedKernel`);
/// - the name is the declarator after the return type, found outside
///   template arguments (PyProf cuts at the first `<`, so
///   `std::enable_if<!T7, void>::type internal::gemvx::kernel<…>(…)`
///   became `std::enable_if`).
///
/// Falls back to the last `::` component of the function name when the rule
/// gives nothing.
pub fn short_name(long: &str) -> String {
    let normalized;
    let long = if long.contains("<unnamed>") {
        normalized = long.replace("<unnamed>", "(anonymous namespace)");
        &normalized
    } else {
        long
    };
    let s = strip_namespaces(declarator(long));
    let s = s.split('(').next().unwrap_or("").trim();
    if !s.is_empty() {
        return s.to_owned();
    }
    // e.g. an operator or a name starting with '<': keep something readable
    let head = long.split('(').next().unwrap_or(long);
    head.rsplit("::").next().unwrap_or(head).trim().to_owned()
}

/// The function name of a demangled signature without its template
/// arguments: the last space-separated word before the parameter list, both
/// found at template depth 0 (so that spaces and parentheses inside `<…>`
/// do not count). `(anonymous namespace)` is skipped as a unit.
fn declarator(long: &str) -> &str {
    const ANON: &str = "(anonymous namespace)";
    let b = long.as_bytes();
    let mut depth = 0usize;
    // start of the current word and end of the name (first `<` or `(` at
    // depth 0 after the word started)
    let mut start = 0;
    let mut end: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        if depth == 0 && long[i..].starts_with(ANON) {
            i += ANON.len();
            continue;
        }
        match b[i] {
            b'<' => {
                if depth == 0 && end.is_none() {
                    end = Some(i);
                }
                depth += 1;
            }
            b'>' => depth = depth.saturating_sub(1),
            b'(' if depth == 0 => {
                // the parameter list
                return &long[start..end.unwrap_or(i)];
            }
            b' ' if depth == 0 => {
                // a word before the name: a return type or a qualifier
                start = i + 1;
                end = None;
            }
            _ => {}
        }
        i += 1;
    }
    &long[start..end.unwrap_or(long.len())]
}

/// Remove the namespaces `at::`, `cuda::`, `native::` and `(anonymous
/// namespace)::` where they are whole components of a qualified name.
fn strip_namespaces(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    let mut at_component_start = true;
    'outer: while !rest.is_empty() {
        if at_component_start {
            for ns in ["at::", "cuda::", "native::", "(anonymous namespace)::"] {
                if let Some(r) = rest.strip_prefix(ns) {
                    rest = r;
                    continue 'outer;
                }
            }
        }
        match rest.find("::") {
            Some(p) => {
                out.push_str(&rest[..p + 2]);
                rest = &rest[p + 2..];
                at_component_start = true;
            }
            None => {
                out.push_str(rest);
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_like_gnu() {
        assert_eq!(
            demangle("_Z7add_onePKfPfi").as_deref(),
            Some("add_one(float const*, float*, int)")
        );
        // invalid mangled names are reported, not guessed
        assert_eq!(demangle("_ZN3foo"), None);
        assert_eq!(demangle("volta_sgemm_64x32_sliced1x4_tn"), None);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn integer_literals_match_cxxfilt() {
        // cpp_demangle prints `(int)128`; GNU prints `128`
        let m = "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implIZZZNS0_15mul_kernel_cudaERNS_14TensorIteratorEENKUlvE_clEvENKUlvE2_clEvEUlffE_EEvS4_RKT_EUliE_EEviT1_";
        let d = demangle(m).unwrap();
        assert!(
            d.starts_with("void at::native::elementwise_kernel<128, 4, "),
            "{d}"
        );
    }

    #[test]
    fn short_names_follow_pyprof() {
        let cases = [
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>>(int)",
                "vectorized_elementwise_kernel",
            ),
            (
                "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 4, 64, 64>(int)",
                "CatArrayBatchedCopy",
            ),
            (
                "void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float, 512, true, 1>(int)",
                "cudnn::bn_fw_tr_1C11_kernel_NCHW",
            ),
            (
                "void at::cuda::detail::cub::DeviceRadixSortOnesweepKernel<int>(int)",
                "detail::cub::DeviceRadixSortOnesweepKernel",
            ),
            (
                "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
                "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
            ),
            ("add_one(const float *, float *, int)", "add_one"),
        ];
        for (long, short) in cases {
            assert_eq!(short_name_pyprof(long), short);
            assert_eq!(short_name(long), short);
        }
    }

    #[test]
    fn nsys_unnamed_namespace_keeps_a_name() {
        let long =
            "void at::native::<unnamed>::avg_pool3d_cuda_update_output<(int)2, float, float>(int)";
        assert_eq!(short_name_pyprof(long), "");
        assert_eq!(short_name(long), "avg_pool3d_cuda_update_output");
    }

    #[test]
    fn namespaces_only_as_components_and_no_return_type() {
        let long =
            "void genericReformat::copyVectorizedKernel<float, float, 4>(float const*, float*)";
        assert_eq!(short_name_pyprof(long), "genericReformcopyVectorizedKernel");
        assert_eq!(short_name(long), "genericReformat::copyVectorizedKernel");
        let long = "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, true, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>>(T13)";
        assert_eq!(short_name_pyprof(long), "std::enable_if");
        assert_eq!(short_name(long), "internal::gemvx::kernel");
        // a return type with template arguments and spaces inside them
        assert_eq!(
            short_name("std::pair<int, float> ns::f<(bool)1>(int (*)(int))"),
            "ns::f"
        );
        // the prefixes still go where they are whole components
        assert_eq!(
            short_name("void at::native::(anonymous namespace)::cuda::k<1>(int)"),
            "k"
        );
        assert_eq!(short_name("void cudakernel::at::f(int)"), "cudakernel::f");
        assert_eq!(
            short_name("void thrust::cuda_cub::core::_kernel_agent<int>(int)"),
            "thrust::cuda_cub::core::_kernel_agent"
        );
    }
}

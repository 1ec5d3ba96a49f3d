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

/// rprof's short name: PyProf's rule, made robust for nsys's own
/// demangler, which writes `<unnamed>` for anonymous namespaces (PyProf cuts
/// at that `<` and prints an empty name). Falls back to the last `::`
/// component of the function name when PyProf's rule gives nothing.
pub fn short_name(long: &str) -> String {
    let normalized;
    let long = if long.contains("<unnamed>") {
        normalized = long.replace("<unnamed>", "(anonymous namespace)");
        &normalized
    } else {
        long
    };
    let s = short_name_pyprof(long);
    if !s.trim().is_empty() {
        return s;
    }
    // e.g. an operator or a name starting with '<': keep something readable
    let head = long.split('(').next().unwrap_or(long);
    head.rsplit("::").next().unwrap_or(head).trim().to_owned()
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
}

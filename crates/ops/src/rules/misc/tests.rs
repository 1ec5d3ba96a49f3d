//! Tests of the smaller models.

use rprof_model::pylit::Value;

use crate::rules::testing::*;

#[test]
fn params_formats_of_apex() {
    // pyprof-apex-differences.md §4.1
    let m = marker("Tensor", "half", &[t(&[10, 10], "float32")]);
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "half|T=(10,10),fp32,fp16,|-|0|600"
    );
    let m = marker("Tensor", "byte", &[t(&[10, 10], "float32")]);
    assert_eq!(apex(&m, "fprop", 0, "k").params, "T=(10,10),fp32,uint8,");
    let m = marker("Tensor", "float", &[v("", "int", i(3))]);
    assert_eq!(apex(&m, "fprop", 0, "k").params, "T=(1,),int32,fp32,");
    let m = marker("Tensor", "to", &[t(&[10, 10], "float16")]);
    assert_eq!(apex(&m, "fprop", 0, "k").params, "T=(10,10),fp16,fp16,");
    let m = marker(
        "torch.nn.functional",
        "embedding",
        &[t(&[35, 20], "int64"), t(&[33278, 200], "float32")],
    );
    assert_eq!(
        apex(&m, "fprop", 0, "k").params,
        "I=(35,20),int64,E=(33278,200),fp32,"
    );
    let m = marker(
        "torch",
        "cat",
        &[
            t(&[2, 3], "float32"),
            t(&[2, 3], "float32"),
            v("", "int", i(0)),
        ],
    );
    assert_eq!(
        row(&apex(&m, "fprop", 1, "k")),
        "cat|T=[(2,3),(2,3)],fp32,|-|0|96"
    );
    assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "0/0");
    let m = marker("torch", "zeros", &[v("", "tuple", tup(&[3, 4, 5]))]);
    assert_eq!(row(&apex(&m, "fprop", 0, "k")), "zeros|T=[],[]|-|0|0");
    assert_eq!(
        row(&fixed(&m, "fprop", 0, "k")),
        "zeros|T=(3,4,5),fp32,|-|0|240"
    );
    let m = marker("Tensor", "zero_", &[t(&[3, 4, 5], "float32")]);
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "zero_|T=[(3,4,5)],['float32']|-|0|0"
    );
    let m = marker(
        "torch",
        "full",
        &[v("", "tuple", tup(&[3, 4])), v("", "float", f(1.5))],
    );
    assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/0");
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/48");
}

#[test]
fn reductions_and_gating() {
    let m = marker("torch", "mean", &[t(&[10, 10], "float32")]);
    assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "101/400");
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "101/404");
    let m = marker("torch", "mean", &[v("", "float", f(1.0))]);
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "2/8");
    let m = marker("Tensor", "norm", &[t(&[10, 10], "float32")]);
    assert_eq!(fb(&apex(&m, "fprop", 1, "k")), "201/400");
    assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "0/0");
    let m = marker("Tensor", "sum", &[t(&[10, 10], "float32")]);
    assert_eq!(fb(&apex(&m, "fprop", 1, "k")), "100/400");
    // [B31]
    assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "0/0");
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "100/400");
}

#[test]
fn softmax_family() {
    let m = marker(
        "torch.nn.functional",
        "softmax",
        &[t(&[32, 16, 128, 128], "float16"), v("dim", "int", i(-1))],
    );
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "softmax|T=(32,16,128,128),fp16,|-|0|50331648"
    );
    assert_eq!(fb(&apex(&m, "bprop", 0, "k")), "0/83886080");
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "335544320/50331648");
    let m = marker(
        "torch.nn.functional",
        "log_softmax",
        &[t(&[32, 1000], "float32")],
    );
    assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/384000");
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "672000/384000");
    // [B32] / apex's LogSoftmax module restriction
    let m = marker("torch", "log_softmax", &[t(&[32, 1000], "float32")]);
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    let m = marker("Tensor", "softmax", &[t(&[32, 1000], "float32")]);
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "1280000/384000");
}

#[test]
fn embedding_batchnorm_adam() {
    let m = marker(
        "torch.nn.functional",
        "embedding",
        &[t(&[32, 128], "int64"), t(&[30522, 768], "float32")],
    );
    assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/25198592");
    assert_eq!(fb(&apex(&m, "bprop", 0, "k")), "0/37748736");
    assert_eq!(fb(&apex(&m, "bprop", 1, "k")), "0/0");
    let mut args = vec![t(&[32, 64, 56, 56], "float16")];
    args.extend((0..7).map(|_| v("", "NoneType", Value::None)));
    let m = marker("torch.nn.functional", "batch_norm", &args);
    assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "51380224/51380224");
    assert_eq!(fb(&apex(&m, "fprop", 1, "k")), "51380224/51380224");
    assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "51380224/0");
    args.push(v("", "bool", Value::Bool(true)));
    let m = marker("torch", "batch_norm", &args);
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    let mut a = vec![
        t(&[1024, 1024], "float32"),
        t(&[1024, 1024], "float16"),
        t(&[1024, 1024], "float32"),
        t(&[1024, 1024], "float32"),
        t(&[1024, 1024], "float16"),
    ];
    a.extend((0..9).map(|_| v("", "float", f(0.1))));
    let m = marker("fused_adam_cuda", "adam", &a);
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "adam|T=(1024,1024),fp32,fp16,|-|0|29360128"
    );
    assert_eq!(fb(&apex(&m, "fprop", 1, "k")), "0/29360128");
    assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "0/0");
}

#[test]
fn index_ops() {
    let m = marker(
        "Tensor",
        "index_select",
        &[
            t(&[100, 64], "float32"),
            v("", "int", i(0)),
            t(&[10], "int64"),
        ],
    );
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    assert_eq!(
        row(&fixed(&m, "fprop", 0, "k")),
        "index_select|T=(100,64),D=0,I=10,fp32,|-|0|5200"
    );
    let m = marker("torch", "nonzero", &[t(&[100, 64], "float32")]);
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/128000");
    let m = marker(
        "Tensor",
        "masked_select",
        &[t(&[10, 10], "float32"), t(&[10, 10], "bool")],
    );
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    // [B33]
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/900");
    let m = marker(
        "torch",
        "gather",
        &[
            t(&[100, 64], "float32"),
            v("", "int", i(1)),
            t(&[100, 8], "int64"),
        ],
    );
    assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/51200");
    // [B34]
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/12800");
}

#[test]
fn misc_classes() {
    let m = marker(
        "torch.nn.functional",
        "mse_loss",
        &[
            t(&[32, 10], "float32"),
            t(&[32, 10], "float32"),
            v("", "str", s("mean")),
        ],
    );
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "mse_loss|T=(32,10),fp32,red=mean,|-|1281|2560"
    );
    // [B37]
    let m = marker(
        "torch.nn.functional",
        "mse_loss",
        &[t(&[32, 10], "float32"), t(&[32, 10], "float32")],
    );
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "1281/2560");
    let m = marker(
        "Tensor",
        "copy_",
        &[t(&[32, 10], "float16"), t(&[32, 10], "float32")],
    );
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "copy_|T=(32,10),fp32,fp16,|-|0|1920"
    );
    let m = marker("torch", "randperm", &[v("", "int", i(1000))]);
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "randperm|N=1000,|-|3000|8000"
    );
    let m = marker("Tensor", "any", &[v("", "bool", Value::Bool(true))]);
    assert!(aborted(&apex(&m, "fprop", 0, "k")));
    assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/1");
    let m = marker(
        "torch.nn.functional",
        "relu",
        &[
            t(&[35, 20, 200], "float32"),
            v("inplace", "bool", Value::Bool(false)),
        ],
    );
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "relu|T=(35,20,200),fp32,|-|140000|1120000"
    );
    assert_eq!(fb(&apex(&m, "bprop", 0, "k")), "140000/1680000");
    let m = marker(
        "torch.nn.functional",
        "layer_norm",
        &[
            t(&[35, 20, 200], "float32"),
            v("", "tuple", tup(&[200])),
            t(&[200], "float32"),
            t(&[200], "float32"),
        ],
    );
    assert_eq!(
        row(&apex(&m, "fprop", 0, "k")),
        "layer_norm|T=[(35,20,200),(200,),(200,)],['float32','float32','float32']|-|0|0"
    );
    let m = marker("Tensor", "backward", &[]);
    assert_eq!(apex(&m, "fprop", 0, "k").params, "T=[],[]");
}

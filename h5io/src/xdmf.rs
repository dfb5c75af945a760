//! XDMF descriptions beside HDF5 files, so ParaView opens their real fields.

use npyio::Dtype;
use std::path::{Path, PathBuf};

/// Where [`write_xdmf`] writes the description of the HDF5 file `h5`: `<file stem>.xmf`
/// beside it.
pub fn xdmf_path(h5: &Path) -> PathBuf {
    h5.with_extension("xmf")
}

/// Writes `<file stem>.xmf` beside the HDF5 file `h5` ([`xdmf_path`]), describing `fields`
/// (dataset, shape, dtype) on a regular grid of spacing 1 so ParaView opens them; complex
/// fields have no XDMF number type and are left out. All-or-nothing ([`npyio::replace_file`]:
/// a temporary file renamed over it; an existing `.xmf` must be a regular file). Local (call
/// it on one rank).
pub fn write_xdmf(
    h5: &Path,
    fields: &[(&str, &[usize], Dtype)],
) -> Result<PathBuf, npyio::NpyError> {
    let xmf = xdmf_path(h5);
    let file_name = h5
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = String::from("<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n");
    for (dataset, shape, dtype) in fields {
        let precision = match dtype {
            Dtype::F32 => 4,
            Dtype::F64 => 8,
            _ => continue,
        };
        let dims = shape
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        let name = dataset.trim_start_matches('/').replace('/', "_");
        let ones = vec!["1"; shape.len()].join(" ");
        let zeros = vec!["0"; shape.len()].join(" ");
        let rank = shape.len();
        let (topology, geometry) = if rank == 2 {
            ("2DCoRectMesh", "ORIGIN_DXDY")
        } else {
            ("3DCoRectMesh", "ORIGIN_DXDYDZ")
        };
        text.push_str(&format!(
            "    <Grid Name=\"{name}\" GridType=\"Uniform\">\n      \
             <Topology TopologyType=\"{topology}\" Dimensions=\"{dims}\"/>\n      \
             <Geometry GeometryType=\"{geometry}\">\n        \
             <DataItem Dimensions=\"{rank}\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">{zeros}</DataItem>\n        \
             <DataItem Dimensions=\"{rank}\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">{ones}</DataItem>\n      \
             </Geometry>\n      \
             <Attribute Name=\"{name}\" AttributeType=\"Scalar\" Center=\"Node\">\n        \
             <DataItem Dimensions=\"{dims}\" NumberType=\"Float\" Precision=\"{precision}\" Format=\"HDF\">{file_name}:{dataset}</DataItem>\n      \
             </Attribute>\n    </Grid>\n"
        ));
    }
    text.push_str("  </Domain>\n</Xdmf>\n");
    npyio::replace_file(&xmf, text.as_bytes())?;
    Ok(xmf)
}

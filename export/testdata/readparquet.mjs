// Reads a Parquet file with hyparquet, an independent reader, and prints
// its schema, row count and rows as JSON (export_e2e_test.go).
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet'

const file = await asyncBufferFromFile(process.argv[2])
const meta = await parquetMetadataAsync(file)
const rows = await parquetReadObjects({ file })
const columns = parquetSchema(meta).children.map(c => c.element.name)
const big = (_, v) => (typeof v === 'bigint' ? Number(v) : v)
console.log(JSON.stringify({ num_rows: Number(meta.num_rows), columns, rows }, big))

package smd

import "reflect"

// dtypeOfNamed maps a named element type (type Celsius float32) to its underlying dtype.
func dtypeOfNamed(z any) DType {
	switch reflect.TypeOf(z).Kind() {
	case reflect.Float32:
		return DTypeFloat32
	case reflect.Float64:
		return DTypeFloat64
	case reflect.Int8:
		return DTypeInt8
	case reflect.Int16:
		return DTypeInt16
	case reflect.Int32:
		return DTypeInt32
	case reflect.Int64:
		return DTypeInt64
	case reflect.Uint8:
		return DTypeUint8
	case reflect.Uint16:
		return DTypeUint16
	case reflect.Uint32:
		return DTypeUint32
	case reflect.Uint64:
		return DTypeUint64
	case reflect.Bool:
		return DTypeBool
	case reflect.Complex64:
		return DTypeComplex64
	case reflect.Complex128:
		return DTypeComplex128
	}
	return DTypeInvalid
}
